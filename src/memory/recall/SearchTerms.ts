/**
 * Full-text terms that also work for languages written without spaces. PostgreSQL's parsers treat a run of
 * Chinese or Japanese characters as one word, so such runs are indexed (and queried) as their characters and
 * character bigrams with the `simple` configuration, beside the `english` configuration for everything else.
 */

const cjkRun = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu

/** Unigrams and bigrams of every CJK run, space separated ("咖啡店" → "咖 啡 店 咖啡 啡店"). */
export const cjkTerms = (text: string): string => {
  const terms: Array<string> = []
  for (const match of text.matchAll(cjkRun)) {
    const chars = [...match[0]]
    terms.push(...chars)
    for (let i = 0; i + 1 < chars.length; i++) terms.push(chars[i]! + chars[i + 1]!)
  }
  return terms.join(" ")
}

const latinWords = (text: string) =>
  text.replace(cjkRun, " ").toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu)?.map((word) =>
    word.replace(/'.*$/, "")
  ) ?? []

/**
 * The query as two OR-queries: `english` words (stemmed and stop-words dropped by PostgreSQL) and CJK terms.
 * Only letters and digits reach the tsquery syntax, so no user input can break it.
 */
export const keywordQuery = (query: string): { readonly english: string; readonly cjk: string } => ({
  english: [...new Set(latinWords(query))].filter((word) => word.length > 1 || /\d/.test(word)).join(" | "),
  cjk: [...new Set(cjkTerms(query).split(" ").filter((term) => term !== ""))].join(" | ")
})

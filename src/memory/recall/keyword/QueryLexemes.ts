/**
 * The lexemes PostgreSQL's `tsvector_to_array(to_tsvector('english', text))` gives a query, computed here, so a
 * recall from the bank's brain needs no statement. The index side stays PostgreSQL's (`search_text`), so these must be
 * exactly PostgreSQL's lexemes: `englishLexemes` answers only for text whose tokens it can name without doubt, and
 * `undefined` for anything else (the caller asks the database then).
 *
 * What it takes: ASCII letters and digits separated by white space and plain punctuation. Words of letters are
 * lower-cased, dropped when they are one of PostgreSQL's 127 English stop words, and stemmed with Snowball's English
 * stemmer (the `porter2` package); words joined by hyphens give the whole compound and each part, each treated so;
 * tokens with digits are kept as they are, lower-cased. What it leaves to the database: any other character, a dot or
 * hyphen next to a digit or before a letter (PostgreSQL reads versions, hosts, file names, floats and signed numbers
 * there), and scientific notation. PostgreSQL 18's Snowball keeps the doubled consonant of `added`, `erred`, `offing`
 * (older servers give `ad`), hence the two stemming modes; `makeQueryLexemes` picks the mode from the server and checks a
 * fixed set of probes against it once at start-up, so a server that stems differently (a future Snowball, another
 * dictionary) only ever costs the statement this saves.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { stem } from "porter2"

export type Stemming = "pg18" | "pre18"

/** PostgreSQL's `english.stop`: the words `ts_lexize('english_stem', word)` answers with no lexeme. */
export const englishStopWords: ReadonlySet<string> = new Set(
  ("i me my myself we our ours ourselves you your yours yourself yourselves he him his himself " +
    "she her hers herself it its itself they them their theirs themselves what which who whom this that these those am is " +
    "are was were be been being have has had having do does did doing a an the and but if or because as until while of at " +
    "by for with about against between into through during before after above below to from up down in out on off over " +
    "under again further then once here there when where why how all any both each few more most other some such no nor " +
    "not only own same so than too very s t can will just don should now").split(" ")
)

/** Everything the text may hold: letters, digits, white space, and punctuation the parser only ever skips. */
const plainText = /^[A-Za-z0-9 \t\n\r.,;:!?'"()[\]{}-]*$/
/**
 * A dot before a letter or digit, after a digit or after a dot (`..` is a path); a hyphen not between two letters; a
 * colon not followed by white space (URLs, times, paths).
 */
const ambiguous = /\.[A-Za-z0-9.]|[0-9]\.|(?<![A-Za-z])-|-(?![A-Za-z])|:(?![ \t\n\r]|$)/
const scientific = /[0-9][eE][0-9]/
const letters = /^[a-z]+$/
const hyphenated = /^[a-z]+(?:-[a-z]+)+$/
const longestText = 4096
const longestToken = 200

/** PostgreSQL 18 keeps the doubled consonant after a first-letter vowel: `added` → `add`, `offing` → `off`. */
const doubledAfterVowel = /^[aeo](?:bb|dd|ff|gg|mm|nn|pp|rr|tt)(?:ed|edly|ing|ingly)s?$/

const stemmed = (word: string, stemming: Stemming): string | undefined => {
  if (englishStopWords.has(word)) return undefined
  return stemming === "pg18" && doubledAfterVowel.test(word) ? word.slice(0, 3) : stem(word)
}

/** The distinct lexemes of `text` in PostgreSQL's order, or `undefined` when only the database can tell. */
export const englishLexemes = (text: string, stemming: Stemming): ReadonlyArray<string> | undefined => {
  if (text.length > longestText || !plainText.test(text) || ambiguous.test(text)) return undefined
  const found = new Set<string>()
  for (const token of text.toLowerCase().split(/[^a-z0-9-]+/)) {
    if (token === "") continue
    if (token.length > longestToken) return undefined
    if (letters.test(token)) {
      const lexeme = stemmed(token, stemming)
      if (lexeme !== undefined) found.add(lexeme)
    } else if (hyphenated.test(token)) {
      for (const word of [token, ...token.split("-")]) {
        const lexeme = stemmed(word, stemming)
        if (lexeme !== undefined) found.add(lexeme)
      }
    } else if (token.includes("-") || scientific.test(token)) {
      return undefined
    } else {
      // Digits, or digits and letters: `int`/`uint` and `numword` tokens, which the `simple` dictionary keeps.
      found.add(token)
    }
  }
  // tsvector order: by bytes (ASCII here), the order `tsvector_to_array` lists them in.
  return [...found].sort()
}

/** Texts that exercise every rule above; the start-up check compares their lexemes with the database's. */
export const probeTexts: ReadonlyArray<string> = [
  "Where does Alice work now?",
  "What did Caroline's kids paint at the lake last summer?",
  "She added the running generously-sized well-known items, erred and was offing them; the eddies ebbing.",
  "How many 42nd street cafes did they visit in 2023 (and in 1999)?",
  "Connection connections connected connecting; relational national rational rationally.",
  "Happiness, hopefully, organization, generalization! Arguing argued argues: argue.",
  "A state-of-the-art co-op e-mail [x-ray] {long-term} \"quoted\" it's don't won't shouldn't.",
  "Skies dying lying tying news innings outing canning herring earring proceed exceed succeed."
]

export class QueryLexemes extends Context.Service<QueryLexemes, {
  /** The query's lexemes, or undefined when the database must be asked. */
  readonly english: (text: string) => ReadonlyArray<string> | undefined
  /** Which stemming the server uses, or `"database"` when the start-up check found a difference. */
  readonly mode: Stemming | "database"
}>()("engram/memory/recall/QueryLexemes") {
  static readonly layer = Layer.effect(
    QueryLexemes,
    Effect.gen(function*() {
      return yield* makeQueryLexemes(yield* SqlClient.SqlClient)
    })
  )
}

/** Every query's lexemes from the database. */
const database = QueryLexemes.of({ english: () => undefined, mode: "database" })

/**
 * Picks the stemming mode from the server's version and checks the probes against it in one statement. On any
 * difference (or if the check cannot run) every query's lexemes come from the database, as before.
 */
export const makeQueryLexemes = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const rows = yield* sql<{ version: number; lexemes: ReadonlyArray<string> }>`
      SELECT current_setting('server_version_num')::int AS version,
        array(SELECT array_to_json(tsvector_to_array(to_tsvector('english', t)))::text FROM unnest(${probeTexts}::text[]) AS t)
          AS lexemes`
    const row = rows[0]
    if (row === undefined) return database
    const stemming: Stemming = row.version >= 180000 ? "pg18" : "pre18"
    const expected = row.lexemes.map((json) => JSON.parse(json) as ReadonlyArray<string>)
    const differing = probeTexts.filter((text, i) =>
      JSON.stringify(englishLexemes(text, stemming)) !== JSON.stringify(expected[i] ?? null)
    )
    if (differing.length > 0) {
      yield* Effect.logWarning(
        `the database stems English differently from engram's query lexemes (server ${row.version}); ` +
          `recall asks the database for each query's lexemes (first difference: "${differing[0]}")`
      )
      return database
    }
    return QueryLexemes.of({ english: (text: string) => englishLexemes(text, stemming), mode: stemming })
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning("could not check the query lexemes against the database; recall asks it for each query", cause)
        .pipe(
          Effect.as(database)
        )
    )
  )

/**
 * The keyword strategy over the bank's in-memory index: the query's lexemes come from PostgreSQL (the same
 * `english` stemming and stop words, and `simple` CJK terms, that built `search_text`), the scoring is the
 * same BM25 as the SQL strategy with exact document frequencies. The request's types and tag scope filter the
 * postings as they are walked (the SQL strategy in `Strategies.ts` stays as the reference the parity test checks).
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { cjkTerms } from "../SearchTerms.ts"
import { BankBrains, type Brain } from "../../../brain/BankBrains.ts"
import { corpusStatistics, keyword } from "../Strategies.ts"
import type { QueryTerm } from "../../../brain/keyword/KeywordIndex.ts"
import type { QueryLexemes } from "./QueryLexemes.ts"
import type { TagPredicate } from "../TagMatch.ts"

/**
 * The query's own lexemes (boost 1) and its expansion's (lower): computed here when `QueryLexemes` can, else by
 * PostgreSQL (CJK terms, unusual punctuation, a server that stems differently).
 */
export const queryTerms = Effect.fn("Recall.queryTerms")(function*(
  query: string,
  expansion: ReadonlyArray<string>,
  expansionWeight: number,
  lexemes?: QueryLexemes["Service"]
) {
  type Lexemes = {
    readonly words: ReadonlyArray<string>
    readonly cjk: ReadonlyArray<string>
    readonly related: ReadonlyArray<string>
  }
  const cjkText = cjkTerms(query)
  const words = lexemes === undefined || cjkText !== "" ? undefined : lexemes.english(query)
  const relatedWords = words === undefined ? undefined : lexemes!.english(expansion.join(" "))
  const { words: queryWords, cjk, related }: Lexemes = words !== undefined && relatedWords !== undefined
    ? { words, cjk: [], related: relatedWords }
    : yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ words: Array<string>; cjk: Array<string>; related: Array<string> }>`
        SELECT tsvector_to_array(to_tsvector('english', ${query})) AS words,
          tsvector_to_array(to_tsvector('simple', ${cjkText})) AS cjk,
          tsvector_to_array(to_tsvector('english', ${expansion.join(" ")})) AS related`
      return rows[0] ?? { words: [], cjk: [], related: [] }
    })
  const own = new Set([...queryWords, ...cjk])
  return [
    ...[...own].map((lexeme): QueryTerm => ({ lexeme, boost: 1 })),
    ...related.filter((lexeme) => !own.has(lexeme)).map((lexeme): QueryTerm => ({ lexeme, boost: expansionWeight }))
  ]
})

export const keywordInMemory = Effect.fn("Recall.keywordInMemory")(function*(options: {
  readonly bankId: string
  readonly query: string
  readonly expansion: ReadonlyArray<string>
  readonly expansionWeight?: number | undefined
  readonly types: ReadonlyArray<string>
  readonly tags?: TagPredicate | undefined
  readonly depth: number
  /** The brain the caller already holds; absent, the bank's is asked for. */
  readonly brain?: Option.Option<Brain> | undefined
  /** The same scope in SQL, for BM25 in SQL while there is no brain (its breaker is open). */
  readonly sqlScope: ReturnType<SqlClient.SqlClient["and"]>
  /** Epoch ms the request reads at: memories expired by then are skipped (the SQL scope says the same). */
  readonly now?: number | undefined
}) {
  if (options.query.trim() === "") return []
  const brains = yield* BankBrains
  const brain = options.brain ?? (yield* brains.available(options.bankId))
  if (Option.isNone(brain)) {
    return yield* keyword({
      scope: options.sqlScope,
      bankId: options.bankId,
      query: options.query,
      expansion: options.expansion,
      expansionWeight: options.expansionWeight,
      depth: options.depth,
      corpus: yield* corpusStatistics(options.bankId)
    })
  }
  const terms = yield* queryTerms(options.query, options.expansion, options.expansionWeight ?? 0.3)
  const excluded = options.now === undefined ? undefined : brain.value.records.expiredAt(options.now)
  return brain.value.keywords.search(terms, {
    types: options.types,
    tags: options.tags,
    depth: options.depth,
    excluded
  })
})

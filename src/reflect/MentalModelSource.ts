/**
 * How reflect reads mental models: the bank's models with content, within the request's tag scope, ranked by how
 * many of the query's words they contain (name, source query, content). Read-only; it never creates or refreshes
 * a model. If the mental model table is missing (an engine embedded without that feature), it finds nothing.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { TagGroup, TagsMatch } from "../domain/Recall.ts"
import { tagScope } from "../memory/recall/TagFilter.ts"

export interface MentalModelHit {
  readonly id: string
  readonly name: string
  readonly content: string
}

export interface MentalModelScope {
  readonly tags?: ReadonlyArray<string> | null | undefined
  readonly tagsMatch?: TagsMatch | undefined
  readonly tagGroups?: ReadonlyArray<TagGroup> | null | undefined
  /** Models never shown, e.g. the one being regenerated from this very reflect. */
  readonly exclude?: ReadonlyArray<string> | undefined
}

/** Words worth matching: letters and digits, three characters or more, at most twelve distinct. */
const queryWords = (query: string) => [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, 12)

export class MentalModelSource extends Context.Service<MentalModelSource, {
  readonly search: (
    bankId: string,
    query: string,
    scope: MentalModelScope,
    limit: number
  ) => Effect.Effect<ReadonlyArray<MentalModelHit>>
}>()("engram/reflect/MentalModelSource") {
  static readonly layer = Layer.effect(
    MentalModelSource,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const search = Effect.fn("MentalModelSource.search")(
        function*(
          bankId: string,
          query: string,
          scope: MentalModelScope,
          limit: number
        ) {
          const present = yield* sql<{ present: boolean }>`SELECT to_regclass('mental_models') IS NOT NULL AS present`
          if (present[0]?.present !== true) return []
          const words = queryWords(query)
          const document = sql`lower(m.name || ' ' || m.source_query || ' ' || m.content)`
          // Each query word found counts one; a model matching no word is still shown when the bank has few models,
          // because a curated summary is often the best context even in other words.
          const rows = yield* sql<{ id: string; name: string; content: string; hits: number }>`
          SELECT m.id, m.name, m.content,
            (SELECT count(*)::int FROM unnest(${words}::text[]) AS w(word) WHERE strpos(${document}, w.word) > 0) AS hits
          FROM mental_models m
          WHERE m.bank_id = ${bankId} AND m.content <> ''
            AND ${tagScope(sql, "m.tags", scope)}
            ${scope.exclude && scope.exclude.length > 0 ? sql`AND m.id NOT IN ${sql.in([...scope.exclude])}` : sql``}
          ORDER BY hits DESC, m.last_refreshed_at DESC NULLS LAST
          LIMIT ${limit * 3}`
          const matching = rows.filter((row) => row.hits > 0)
          return (matching.length > 0 ? matching : rows.length <= limit ? rows : [])
            .slice(0, limit)
            .map(({ id, name, content }) => ({ id, name, content }))
        },
        (effect) =>
          Effect.catchCause(
            effect,
            (cause) => Effect.logWarning("reading mental models for reflect failed", cause).pipe(Effect.as([]))
          )
      )

      return MentalModelSource.of({ search })
    })
  )
}

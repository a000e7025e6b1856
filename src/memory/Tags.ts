/** The tags used in a bank with how many memories carry each, filtered by a glob (`*`, `?`). */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import type { NotFound } from "../domain/Errors.ts"
import { liveAt } from "./forgetting/Expiry.ts"

/** Turns a glob into a LIKE pattern, escaping LIKE's own wildcards first. */
export const globToLike = (glob: string) => glob.replace(/[\\%_]/g, "\\$&").replace(/\*/g, "%").replace(/\?/g, "_")

export class Tags extends Context.Service<Tags, {
  readonly list: (
    bankId: string,
    filter: { readonly q?: string | undefined; readonly limit: number; readonly offset: number }
  ) => Effect.Effect<
    { readonly items: ReadonlyArray<{ tag: string; count: number }>; readonly total: number },
    NotFound
  >
}>()("engram/memory/Tags") {
  static readonly layer = Layer.effect(
    Tags,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const list = Effect.fn("Tags.list")(function*(bankId: string, filter: {
        readonly q?: string | undefined
        readonly limit: number
        readonly offset: number
      }) {
        yield* banks.get(bankId)
        const pattern = filter.q
          ? globToLike(filter.q.includes("*") || filter.q.includes("?") ? filter.q : `*${filter.q}*`)
          : "%"
        const tagged = sql`SELECT t.tag, count(*)::int AS count FROM memory_units u, unnest(u.tags) AS t(tag)
          WHERE u.bank_id = ${bankId} AND t.tag LIKE ${pattern} AND ${liveAt(sql, "u", new Date())} GROUP BY t.tag`
        const [rows, total] = yield* Effect.all([
          sql<
            { tag: string; count: number }
          >`${tagged} ORDER BY count DESC, t.tag LIMIT ${filter.limit} OFFSET ${filter.offset}`,
          sql<{ count: number }>`SELECT count(*)::int AS count FROM (${tagged}) s`
        ]).pipe(Effect.orDie)
        return { items: rows, total: total[0]?.count ?? 0 }
      })
      return Tags.of({ list })
    })
  )
}

/**
 * Every entity of a bank, with what is stored (mention count, first and last seen) beside what a recount of the facts
 * that name it gives (observations excluded): the tests of the incremental mention and time bookkeeping compare the
 * two after retains, deletions and sweeps.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface StoredBesideRecount {
  readonly name: string
  readonly stored: number
  readonly firstSeen: Date | null
  readonly lastSeen: Date | null
  readonly mentions: number | null
  readonly first: Date | null
  readonly last: Date | null
}

export const entitiesBesideRecount = (bankId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<StoredBesideRecount>`
    SELECT e.canonical_name AS name, e.mention_count AS stored, e.first_seen, e.last_seen, s.mentions, s.first, s.last
    FROM entities e LEFT JOIN (
      SELECT ue.entity_id, count(*)::int AS mentions,
        min(coalesce(u.mentioned_at, u.created_at)) AS first, max(coalesce(u.mentioned_at, u.created_at)) AS last
      FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
      WHERE u.fact_type <> 'observation' GROUP BY ue.entity_id) s ON s.entity_id = e.id
    WHERE e.bank_id = ${bankId} ORDER BY e.canonical_name`.pipe(Effect.orDie)
  })

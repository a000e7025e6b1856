/**
 * Mental models built from memories that are going: emptied in the caller's transaction (so none shows content whose
 * sources are gone) and refreshed by the caller after its commit, from what the bank still holds. A model cites its
 * sources in its stored reflect response, which is why the match is on the ids there. Used by the retention sweep.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The ids of the bank's models that cite any of `memoryIds`, emptied. At most a slice of ids is expected. */
export const emptyModelsCiting = Effect.fn("Forgetting.emptyModelsCiting")(function*(
  bankId: string,
  memoryIds: ReadonlyArray<string>
) {
  const sql = yield* SqlClient.SqlClient
  if (memoryIds.length === 0) return []
  const rows = yield* sql<{ id: string }>`UPDATE mental_models
    SET content = '', reflect_response = NULL, last_refreshed_at = NULL, updated_at = now()
    WHERE bank_id = ${bankId} AND reflect_response IS NOT NULL
      AND (${sql.or(memoryIds.map((id) => sql`reflect_response::text LIKE ${`%${id}%`}`))})
    RETURNING id`
  return rows.map((row) => row.id)
})

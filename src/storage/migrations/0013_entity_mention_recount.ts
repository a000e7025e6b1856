/**
 * Retain now adds new mentions to an entity's stored count and first/last seen instead of recounting all of the
 * entity's facts, and every path that deletes facts recounts the entities they named. Before, some deleting paths
 * left those values stale until the next retain recounted them; this recounts every entity once, so the stored
 * values start out equal to the recount that additions then keep current. Observations do not count.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    UPDATE entities e SET (mention_count, first_seen, last_seen) = (
      SELECT count(*)::int,
        coalesce(min(coalesce(u.mentioned_at, u.created_at)), e.first_seen),
        coalesce(max(coalesce(u.mentioned_at, u.created_at)), e.last_seen)
      FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
      WHERE ue.entity_id = e.id AND u.fact_type <> 'observation')`
})

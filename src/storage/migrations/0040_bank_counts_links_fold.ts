/**
 * `bank_counts_links_changed` (migration 0039) carried the same grouped count twice, once per branch of its
 * `INSERT`/`DELETE` test, differing only in the sign. Replaced by one statement whose sign follows the operation;
 * behaviour unchanged: a delete whose caller counted its links itself (the trigger dropping a deleted memory's
 * links sets `engram.links_counted_by_caller`) is still skipped. The two triggers keep calling it by name.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION bank_counts_links_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND coalesce(current_setting('engram.links_counted_by_caller', true), '') = 'on' THEN
        RETURN NULL;
      END IF;
      PERFORM bank_counts_add(coalesce((SELECT jsonb_agg(t) FROM (
        SELECT u.bank_id, u.fact_type, x.link_type, sum(x.n) AS n
        FROM (SELECT from_id, link_type, count(*) AS n FROM changed GROUP BY 1, 2) x
        CROSS JOIN LATERAL (SELECT bank_id, fact_type FROM memory_units WHERE id = x.from_id) u
        GROUP BY 1, 2, 3) t), '[]'::jsonb), CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END);
      RETURN NULL;
    END $$`
})

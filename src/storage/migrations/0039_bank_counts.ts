/**
 * `GET {bank}/stats` counted every memory and every link of the bank on each call (three passes over the links, one
 * joined to the memories, and a scan of the memories for the last write time): about a second of CPU and 104 MB
 * read per call at 10k memories, growing with the bank. The counts are now kept up to date by triggers, in the
 * transaction of each write, so a stats call reads a few rows:
 * - `bank_counts`: per bank and fact type, the memories (`link_type = ''`) and the links from them per link type. A
 *   link is counted while it and the memory it comes from both exist, whichever was written first (a repo restore
 *   writes links and memories in either order), so the counts equal a fresh count joined to the memories;
 * - `banks.last_memory_write_at`: the latest `created_at`/`updated_at` a memory was written with (a deletion leaves it).
 * Decrements only ever update rows, never insert: a bank's deletion cascades through its memories and must not
 * write counts for the bank it deletes.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE bank_counts (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      fact_type text NOT NULL,
      link_type text NOT NULL,
      count bigint NOT NULL,
      PRIMARY KEY (bank_id, fact_type, link_type)
    )`
  yield* sql`
    INSERT INTO bank_counts (bank_id, fact_type, link_type, count)
    SELECT bank_id, fact_type, '', count(*) FROM memory_units GROUP BY bank_id, fact_type
    UNION ALL
    SELECT u.bank_id, u.fact_type, l.link_type, count(*) FROM memory_links l JOIN memory_units u ON u.id = l.from_id
    GROUP BY u.bank_id, u.fact_type, l.link_type`
  yield* sql`ALTER TABLE banks ADD COLUMN last_memory_write_at timestamptz`
  yield* sql`
    UPDATE banks b SET last_memory_write_at = w.last
    FROM (SELECT bank_id, max(greatest(created_at, updated_at)) AS last FROM memory_units GROUP BY bank_id) w
    WHERE w.bank_id = b.bank_id`

  // Adds to (or takes from) the counts; `sign` is 1 or -1. Only an addition inserts a missing row.
  yield* sql`
    CREATE FUNCTION bank_counts_add(rows jsonb, sign int) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF sign > 0 THEN
        INSERT INTO bank_counts (bank_id, fact_type, link_type, count)
        SELECT r.bank_id, r.fact_type, r.link_type, r.n
        FROM jsonb_to_recordset(rows) AS r(bank_id text, fact_type text, link_type text, n bigint)
        ORDER BY 1, 2, 3
        ON CONFLICT (bank_id, fact_type, link_type) DO UPDATE SET count = bank_counts.count + excluded.count;
      ELSE
        UPDATE bank_counts c SET count = c.count - r.n
        FROM jsonb_to_recordset(rows) AS r(bank_id text, fact_type text, link_type text, n bigint)
        WHERE c.bank_id = r.bank_id AND c.fact_type = r.fact_type AND c.link_type = r.link_type;
      END IF;
    END $$`

  // Memories inserted: counted, with any links from them already there; the bank's last memory write moves.
  yield* sql`
    CREATE FUNCTION bank_counts_units_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM bank_counts_add(coalesce((SELECT jsonb_agg(t) FROM (
        SELECT n.bank_id, n.fact_type, '' AS link_type, count(*) AS n FROM written n GROUP BY 1, 2
        UNION ALL
        SELECT n.bank_id, n.fact_type, l.link_type, count(*) FROM written n
        CROSS JOIN LATERAL (SELECT link_type FROM memory_links WHERE from_id = n.id) l
        GROUP BY 1, 2, 3) t), '[]'::jsonb), 1);
      UPDATE banks b SET last_memory_write_at = greatest(b.last_memory_write_at, w.last)
      FROM (SELECT bank_id, max(greatest(created_at, updated_at)) AS last FROM written GROUP BY bank_id) w
      WHERE b.bank_id = w.bank_id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_units_counted AFTER INSERT ON memory_units
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_units_inserted()`

  // A memory edited (or consolidated) moves the bank's last memory write. Per row, without a transition table (an
  // update of a thousand memories would copy them all); a bulk update writes one time, so only its first row writes
  // the bank's row and the others are a key probe.
  yield* sql`
    CREATE FUNCTION bank_counts_unit_written() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE banks SET last_memory_write_at = NEW.updated_at
      WHERE bank_id = NEW.bank_id AND (last_memory_write_at IS NULL OR last_memory_write_at < NEW.updated_at);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_units_write_time AFTER UPDATE OF updated_at ON memory_units
    FOR EACH ROW WHEN (NEW.updated_at IS DISTINCT FROM OLD.updated_at) EXECUTE FUNCTION bank_counts_unit_written()`

  // A memory whose fact type changes (a curation edit) moves its count and its links' counts.
  yield* sql`
    CREATE FUNCTION bank_counts_unit_retyped() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE moved jsonb;
    BEGIN
      SELECT coalesce(jsonb_agg(t), '[]'::jsonb) INTO moved FROM (
        SELECT '' AS link_type, 1::bigint AS n
        UNION ALL
        SELECT l.link_type, count(*) FROM memory_links l WHERE l.from_id = OLD.id GROUP BY 1) t;
      PERFORM bank_counts_add((SELECT coalesce(jsonb_agg(m || jsonb_build_object('bank_id', OLD.bank_id,
        'fact_type', OLD.fact_type)), '[]'::jsonb) FROM jsonb_array_elements(moved) m), -1);
      PERFORM bank_counts_add((SELECT coalesce(jsonb_agg(m || jsonb_build_object('bank_id', NEW.bank_id,
        'fact_type', NEW.fact_type)), '[]'::jsonb) FROM jsonb_array_elements(moved) m), 1);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_units_retyped AFTER UPDATE OF fact_type ON memory_units
    FOR EACH ROW WHEN (OLD.fact_type IS DISTINCT FROM NEW.fact_type) EXECUTE FUNCTION bank_counts_unit_retyped()`

  // Memories deleted: uncounted, and the links from them taken off by the delete that drops them (its RETURNING
  // rows: no second read of the links; the links' own trigger is told to skip that delete, since it would no longer
  // find the memories they came from). The links to them from other memories go by a plain delete, which the links'
  // trigger counts (a delete with RETURNING joined to the memories here read 10 MB more a slice of 200 at 10k).
  yield* sql`
    CREATE OR REPLACE FUNCTION drop_links_of_deleted_units() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE counts jsonb;
    BEGIN
      PERFORM set_config('engram.links_counted_by_caller', 'on', true);
      WITH d AS (DELETE FROM memory_links l USING gone g WHERE l.from_id = g.id RETURNING g.bank_id, g.fact_type, l.link_type)
      SELECT jsonb_agg(t) INTO counts FROM (
        SELECT g.bank_id, g.fact_type, '' AS link_type, count(*) AS n FROM gone g GROUP BY 1, 2
        UNION ALL
        SELECT d.bank_id, d.fact_type, d.link_type, count(*) FROM d GROUP BY 1, 2, 3) t;
      PERFORM set_config('engram.links_counted_by_caller', 'off', true);
      PERFORM bank_counts_add(coalesce(counts, '[]'::jsonb), -1);
      DELETE FROM memory_links l USING gone g WHERE l.to_id = g.id;
      RETURN NULL;
    END $$`

  // Links inserted or deleted: counted by the fact type of the memory they come from, when it exists. Every lookup
  // here is a LATERAL probe by key: a join to a transition table may be planned as a scan of the whole table, which
  // would make a write cost what the database holds.
  yield* sql`
    CREATE FUNCTION bank_counts_links_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        PERFORM bank_counts_add(coalesce((SELECT jsonb_agg(t) FROM (
          SELECT u.bank_id, u.fact_type, x.link_type, sum(x.n) AS n
          FROM (SELECT from_id, link_type, count(*) AS n FROM changed GROUP BY 1, 2) x
          CROSS JOIN LATERAL (SELECT bank_id, fact_type FROM memory_units WHERE id = x.from_id) u
          GROUP BY 1, 2, 3) t), '[]'::jsonb), 1);
      ELSIF coalesce(current_setting('engram.links_counted_by_caller', true), '') <> 'on' THEN
        PERFORM bank_counts_add(coalesce((SELECT jsonb_agg(t) FROM (
          SELECT u.bank_id, u.fact_type, x.link_type, sum(x.n) AS n
          FROM (SELECT from_id, link_type, count(*) AS n FROM changed GROUP BY 1, 2) x
          CROSS JOIN LATERAL (SELECT bank_id, fact_type FROM memory_units WHERE id = x.from_id) u
          GROUP BY 1, 2, 3) t), '[]'::jsonb), -1);
      END IF;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_links_counted_in AFTER INSERT ON memory_links
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_links_changed()`
  yield* sql`
    CREATE TRIGGER memory_links_counted_out AFTER DELETE ON memory_links
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_links_changed()`
})

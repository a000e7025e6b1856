/**
 * The brain holds every field recall reads (src/brain/records/), so the memory change log must report a memory whenever
 * any of them changes, not only its text, type or tags: a fact superseded or its confidence changed by a correction,
 * an observation's times moved, an opinion reinforced, a re-embedding. An entity renamed changes what every memory
 * naming it shows, so a rename reports those memories too (renames are rare: the resolver takes a fuller name).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER memory_unit_changes ON memory_units`
  yield* sql`
    CREATE TRIGGER memory_unit_changes AFTER DELETE OR UPDATE OF text, search_text, fact_type, tags, context,
      occurred_start, occurred_end, mentioned_at, document_id, chunk_id, metadata, source_fact_ids, confidence,
      superseded_by, embedding, embedding_model
    ON memory_units FOR EACH ROW EXECUTE FUNCTION note_memory_unit_change()`
  yield* sql`
    CREATE FUNCTION note_entity_rename() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO memory_unit_changes (bank_id, unit_id)
      SELECT NEW.bank_id, ue.unit_id FROM unit_entities ue WHERE ue.entity_id = NEW.id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER entity_renames AFTER UPDATE OF canonical_name ON entities
    FOR EACH ROW WHEN (OLD.canonical_name IS DISTINCT FROM NEW.canonical_name)
    EXECUTE FUNCTION note_entity_rename()`
})

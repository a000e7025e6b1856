/**
 * What retain needs beyond the base memory tables: documents keep their text and retain context, units
 * record which embedding model made their vector (so a model change can re-embed instead of mixing vector
 * spaces), entities keep their aliases for resolution, and banks remember their embedding model.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents ADD COLUMN original_text text`
  yield* sql`ALTER TABLE documents ADD COLUMN context text`
  yield* sql`ALTER TABLE documents ADD COLUMN retained_at timestamptz`
  yield* sql`ALTER TABLE memory_units ADD COLUMN embedding_model text`
  yield* sql`ALTER TABLE memory_units ADD COLUMN item_index integer`
  yield* sql`ALTER TABLE memory_units ADD COLUMN fact_index integer`
  // Retain order across the bank: adjacent turns of a conversation are adjacent here, even with equal timestamps.
  yield* sql`ALTER TABLE memory_units ADD COLUMN seq bigserial`
  yield* sql`ALTER TABLE chunks ADD COLUMN operation_id text`
  yield* sql`ALTER TABLE banks ADD COLUMN embedding_model text`
  yield* sql`
    CREATE TABLE entity_aliases (
      entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      alias text NOT NULL,
      PRIMARY KEY (bank_id, alias, entity_id)
    )`
  yield* sql`CREATE INDEX memory_units_time ON memory_units (bank_id, coalesce(occurred_start, mentioned_at))`
  yield* sql`CREATE INDEX unit_entities_unit ON unit_entities (unit_id)`
  yield* sql`CREATE INDEX memory_units_seq ON memory_units (bank_id, seq)`
})

/**
 * Anomalies found at write time and the corrections applied for them. A fact replaced by a newer one records
 * its replacement in `superseded_by` (cleared when the replacement is deleted, and its confidence restored, so
 * the older fact is current again); it stays stored, because it is history. `pair_key` names a pair of statements by their content, so a
 * suppressed pair stays suppressed when the same statements are retained again under new unit ids.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memory_units ADD COLUMN superseded_by text REFERENCES memory_units (id) ON DELETE SET NULL`
  // The foreign key looks superseded facts up on every unit delete: without this index each delete scans the table.
  yield* sql`CREATE INDEX memory_units_superseded_by ON memory_units (superseded_by) WHERE superseded_by IS NOT NULL`
  yield* sql`
    CREATE TABLE anomaly_events (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      seq bigserial,
      anomaly_type text NOT NULL,
      severity real NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved', 'suppressed')),
      unit_ids text[] NOT NULL DEFAULT '{}',
      entity_ids text[] NOT NULL DEFAULT '{}',
      pair_key text,
      description text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      note text,
      detected_at timestamptz NOT NULL,
      resolved_at timestamptz,
      resolved_by text
    )`
  yield* sql`CREATE INDEX anomaly_events_bank ON anomaly_events (bank_id, detected_at DESC, seq DESC)`
  yield* sql`CREATE INDEX anomaly_events_pair ON anomaly_events (bank_id, pair_key) WHERE pair_key IS NOT NULL`
  yield* sql`
    CREATE TABLE anomaly_corrections (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      anomaly_id text NOT NULL REFERENCES anomaly_events (id) ON DELETE CASCADE,
      correction_type text NOT NULL,
      -- No foreign key: a correction is a record of what was done, kept when its unit is deleted later.
      target_unit_id text,
      before_state jsonb NOT NULL DEFAULT '{}'::jsonb,
      after_state jsonb NOT NULL DEFAULT '{}'::jsonb,
      confidence_delta real,
      applied_at timestamptz NOT NULL,
      applied_by text NOT NULL
    )`
  yield* sql`CREATE INDEX anomaly_corrections_event ON anomaly_corrections (anomaly_id)`
  yield* sql`CREATE INDEX anomaly_corrections_target ON anomaly_corrections (target_unit_id)`
  // When the replacement is deleted (the foreign key clears `superseded_by`), the older fact is current again and
  // gets back the confidence it had before that supersession, so the next contradiction is judged at full weight.
  yield* sql`
    CREATE FUNCTION restore_superseded_confidence() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.superseded_by IS NOT NULL AND NEW.superseded_by IS NULL THEN
        NEW.confidence := coalesce((
          SELECT (c.before_state->>'confidence_score')::real FROM anomaly_corrections c
          WHERE c.target_unit_id = NEW.id AND c.after_state->>'superseded_by' = OLD.superseded_by
          ORDER BY c.applied_at LIMIT 1), NEW.confidence);
      END IF;
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER restore_superseded_confidence BEFORE UPDATE OF superseded_by ON memory_units
    FOR EACH ROW EXECUTE FUNCTION restore_superseded_confidence()`
})

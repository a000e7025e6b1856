/**
 * Writes what the detectors found, in the caller's transaction: events (minus pairs a user suppressed), the
 * corrections planned for them, and the supersession of older statements. Three statements per batch at most,
 * whatever the number of anomalies.
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { planCorrection } from "./Corrections.ts"
import type { Detected, Statement } from "./Detected.ts"

export const storeAnomalies = Effect.fnUntraced(function*(
  bankId: string,
  detected: ReadonlyArray<Detected>,
  statements: ReadonlyMap<string, Statement>
) {
  const sql = yield* SqlClient.SqlClient
  const keys = [...new Set(detected.map((anomaly) => anomaly.pairKey))]
  const suppressed = new Set((yield* sql<{ pairKey: string }>`
    SELECT DISTINCT pair_key FROM anomaly_events
    WHERE bank_id = ${bankId} AND status = 'suppressed' AND pair_key IN ${sql.in(keys)}`).map((row) => row.pairKey))
  const reported = detected.filter((anomaly) => !suppressed.has(anomaly.pairKey))
  if (reported.length === 0) return 0

  const now = new Date(yield* Clock.currentTimeMillis).toISOString()
  const confidence = new Map<string, { value: number; supersededBy: string | null }>()
  const events: Array<Record<string, unknown>> = []
  const corrections: Array<Record<string, unknown>> = []
  const supersessions = new Map<string, { id: string; confidence: number; superseded_by: string }>()
  // Most severe first, so when two anomalies touch the same statement the surer one is corrected first.
  for (const anomaly of [...reported].sort((a, b) => b.severity - a.severity)) {
    const id = crypto.randomUUID()
    const plan = planCorrection(anomaly, statements, confidence)
    events.push({
      id,
      anomaly_type: anomaly.type,
      severity: anomaly.severity,
      status: plan.status,
      unit_ids: anomaly.unitIds,
      entity_ids: anomaly.entityIds,
      pair_key: anomaly.pairKey,
      description: anomaly.description,
      metadata: anomaly.metadata,
      resolved_at: plan.status === "resolved" ? now : null,
      resolved_by: plan.status === "resolved" ? "auto" : null
    })
    const correction = plan.correction
    if (correction === null) continue
    corrections.push({
      id: crypto.randomUUID(),
      anomaly_id: id,
      correction_type: correction.correctionType,
      target_unit_id: correction.targetUnitId,
      before_state: correction.beforeState,
      after_state: correction.afterState,
      confidence_delta: correction.confidenceDelta
    })
    if (correction.supersede !== null) {
      supersessions.set(correction.supersede.unitId, {
        id: correction.supersede.unitId,
        confidence: correction.supersede.confidence,
        superseded_by: correction.supersede.by
      })
    }
  }

  yield* sql`
    INSERT INTO anomaly_events (id, bank_id, anomaly_type, severity, status, unit_ids, entity_ids, pair_key,
      description, metadata, detected_at, resolved_at, resolved_by)
    SELECT x.id, ${bankId}, x.anomaly_type, x.severity, x.status, x.unit_ids, x.entity_ids, x.pair_key,
      x.description, x.metadata, ${now}::timestamptz, x.resolved_at, x.resolved_by
    FROM jsonb_to_recordset(${JSON.stringify(events)}::jsonb) AS x(id text, anomaly_type text, severity real,
      status text, unit_ids text[], entity_ids text[], pair_key text, description text, metadata jsonb,
      resolved_at timestamptz, resolved_by text)`
  if (corrections.length > 0) {
    yield* sql`
      INSERT INTO anomaly_corrections (id, bank_id, anomaly_id, correction_type, target_unit_id, before_state,
        after_state, confidence_delta, applied_at, applied_by)
      SELECT x.id, ${bankId}, x.anomaly_id, x.correction_type, x.target_unit_id, x.before_state, x.after_state,
        x.confidence_delta, ${now}::timestamptz, 'auto'
      FROM jsonb_to_recordset(${JSON.stringify(corrections)}::jsonb) AS x(id text, anomaly_id text,
        correction_type text, target_unit_id text, before_state jsonb, after_state jsonb, confidence_delta real)`
  }
  if (supersessions.size > 0) {
    yield* sql`
      UPDATE memory_units u SET confidence = x.confidence, superseded_by = x.superseded_by, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify([...supersessions.values()])}::jsonb)
        AS x(id text, confidence real, superseded_by text)
      WHERE u.id = x.id AND u.bank_id = ${bankId}`
  }
  return events.length
})

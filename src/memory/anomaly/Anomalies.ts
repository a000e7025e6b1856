/**
 * Reading a bank's anomalies (a summary over all of them, the newest events with their corrections) and the
 * user's actions on one event: acknowledge, resolve, suppress. Suppressing is remembered by the event's pair of
 * statements, so later retains never report that pair again. Detection itself runs inside retain.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../../bank/Banks.ts"
import {
  type AnomalyAction,
  anomalyActions,
  type AnomalyCorrectionResponse,
  type AnomalyEventResponse,
  type AnomalyIntelligenceRequest,
  type AnomalyIntelligenceResponse
} from "../../domain/Anomaly.ts"
import { NotFound } from "../../domain/Errors.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"

interface EventRow {
  readonly id: string
  readonly bankId: string
  readonly anomalyType: string
  readonly severity: number
  readonly status: AnomalyEventResponse["status"]
  readonly unitIds: ReadonlyArray<string>
  readonly entityIds: ReadonlyArray<string>
  readonly description: string
  readonly metadata: Record<string, unknown>
  readonly note: string | null
  readonly detectedAt: Date
  readonly resolvedAt: Date | null
  readonly resolvedBy: string | null
}

interface CorrectionRow {
  readonly id: string
  readonly bankId: string
  readonly anomalyId: string
  readonly correctionType: string
  readonly targetUnitId: string | null
  readonly beforeState: Record<string, unknown>
  readonly afterState: Record<string, unknown>
  readonly confidenceDelta: number | null
  readonly appliedAt: Date
  readonly appliedBy: string
}

const toCorrection = (row: CorrectionRow): AnomalyCorrectionResponse => ({
  id: row.id,
  bank_id: row.bankId,
  anomaly_id: row.anomalyId,
  correction_type: row.correctionType,
  target_unit_id: row.targetUnitId,
  before_state: row.beforeState,
  after_state: row.afterState,
  confidence_delta: row.confidenceDelta === null ? null : Number(row.confidenceDelta.toFixed(4)),
  applied_at: row.appliedAt.toISOString(),
  applied_by: row.appliedBy
})

const toEvent = (row: EventRow, corrections: ReadonlyArray<CorrectionRow>): AnomalyEventResponse => ({
  id: row.id,
  bank_id: row.bankId,
  anomaly_type: row.anomalyType,
  severity: Number(row.severity.toFixed(4)),
  status: row.status,
  unit_ids: row.unitIds,
  entity_ids: row.entityIds,
  description: row.description,
  metadata: row.metadata,
  detected_at: row.detectedAt.toISOString(),
  resolved_at: iso(row.resolvedAt),
  resolved_by: row.resolvedBy,
  note: row.note,
  corrections: corrections.map(toCorrection)
})

const eventColumns = "id, bank_id, anomaly_type, severity, status, unit_ids, entity_ids, description, metadata, " +
  "note, detected_at, resolved_at, resolved_by"

export class Anomalies extends Context.Service<Anomalies, {
  readonly intelligence: (
    bankId: string,
    request: AnomalyIntelligenceRequest
  ) => Effect.Effect<AnomalyIntelligenceResponse, NotFound>
  readonly act: (
    bankId: string,
    eventId: string,
    action: AnomalyAction,
    note: string | null
  ) => Effect.Effect<AnomalyEventResponse, NotFound>
}>()("engram/memory/anomaly/Anomalies") {
  static readonly layer = Layer.effect(
    Anomalies,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const columns = sql.literal(eventColumns)

      const withCorrections = (rows: ReadonlyArray<EventRow>) =>
        Effect.gen(function*() {
          const corrections = rows.length === 0 ? [] : yield* sql<CorrectionRow>`
            SELECT id, bank_id, anomaly_id, correction_type, target_unit_id, before_state, after_state,
              confidence_delta, applied_at, applied_by
            FROM anomaly_corrections WHERE anomaly_id IN ${sql.in(rows.map((row) => row.id))}
            ORDER BY applied_at, id`
          return rows.map((row) => toEvent(row, corrections.filter((correction) => correction.anomalyId === row.id)))
        })

      const intelligence = Effect.fn("Anomalies.intelligence")(function*(
        bankId: string,
        request: AnomalyIntelligenceRequest
      ) {
        yield* banks.get(bankId)
        const types = request.anomaly_types ?? null
        const where = sql.and([
          sql`bank_id = ${bankId}`,
          ...(request.status ? [sql`status = ${request.status}`] : []),
          ...(types !== null && types.length > 0 ? [sql`anomaly_type IN ${sql.in(types)}`] : []),
          ...((request.min_severity ?? 0) > 0 ? [sql`severity >= ${request.min_severity ?? 0}`] : [])
        ])
        const [totals, byType, rows] = yield* Effect.all([
          sql<{ total: number; open: number; resolved: number; avgSeverity: number | null }>`
            SELECT count(*)::int AS total, (count(*) FILTER (WHERE status = 'open'))::int AS open,
              (count(*) FILTER (WHERE status = 'resolved'))::int AS resolved, avg(severity)::float8 AS avg_severity
            FROM anomaly_events WHERE bank_id = ${bankId}`,
          sql<{ anomalyType: string; count: number }>`
            SELECT anomaly_type, count(*)::int AS count FROM anomaly_events WHERE bank_id = ${bankId}
            GROUP BY anomaly_type ORDER BY anomaly_type`,
          sql<EventRow>`SELECT ${columns} FROM anomaly_events WHERE ${where}
            ORDER BY detected_at DESC, seq DESC LIMIT ${request.limit ?? 50}`
        ]).pipe(Effect.orDie)
        const events = yield* withCorrections(rows).pipe(Effect.orDie)
        const total = totals[0]
        return {
          summary: {
            total_events: total?.total ?? 0,
            open_events: total?.open ?? 0,
            resolved_events: total?.resolved ?? 0,
            avg_severity: Number((total?.avgSeverity ?? 0).toFixed(4)),
            by_type: Object.fromEntries(byType.map((row) => [row.anomalyType, row.count]))
          },
          events,
          total_events_in_response: events.length
        } satisfies AnomalyIntelligenceResponse
      })

      const act = Effect.fn("Anomalies.act")(function*(
        bankId: string,
        eventId: string,
        action: AnomalyAction,
        note: string | null
      ) {
        const status = anomalyActions[action]
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        // Resolving records when and by whom; leaving `resolved` for another status clears that again.
        const rows = yield* sql<EventRow>`
          UPDATE anomaly_events SET status = ${status}, note = ${note},
            resolved_at = ${status === "resolved" ? now : null}::timestamptz, resolved_by = ${
          status === "resolved" ? "user" : null
        }
          WHERE bank_id = ${bankId} AND id = ${eventId}
          RETURNING ${columns}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of("anomaly event", eventId)
        const [event] = yield* withCorrections([row]).pipe(Effect.orDie)
        return event!
      })

      return Anomalies.of({ intelligence, act })
    })
  )
}

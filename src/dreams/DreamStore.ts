/**
 * Persistence of dream runs, predictions, outcomes and proposals. A run is written with its predictions and
 * proposals in one transaction, keyed by the operation that produced it, so a run re-executed after a crash finds
 * the run it already wrote instead of writing a second one.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { DreamRunType, DreamTriggerSource } from "../domain/Dream.ts"
import type { Confidence, DreamStatus, PredictionDraft, ProposalDraft } from "./DreamResult.ts"
import type { History } from "./DreamTypes.ts"

export interface NewRun {
  readonly id: string
  readonly bankId: string
  readonly operationId: string
  readonly status: DreamStatus
  readonly runType: DreamRunType
  readonly triggerSource: DreamTriggerSource
  readonly generator: "llm" | "deterministic"
  readonly summary: string
  readonly narrativeHtml: string | null
  readonly evidenceBasis: Record<string, unknown>
  readonly signals: Record<string, unknown>
  readonly growth: ReadonlyArray<unknown>
  readonly validations: ReadonlyArray<unknown>
  readonly confidence: Confidence
  readonly novelty: number
  readonly quality: number
  readonly maturityTier: string
  readonly failureReason: string | null
  readonly evidenceIds: ReadonlyArray<string>
  readonly inputTokens: number
  readonly outputTokens: number
  readonly metadata: Record<string, unknown>
  readonly createdAt: Date
  readonly predictions: ReadonlyArray<PredictionDraft>
  readonly proposals: ReadonlyArray<ProposalDraft>
}

export type Row = Record<string, unknown>

const dayMillis = 86_400_000
const iso = (
  value: unknown
) => (value instanceof Date ? value.toISOString() : value === null || value === undefined ? null : String(value))
const strings = (value: unknown): Array<string> => (Array.isArray(value) ? value.map(String) : [])

export const predictionView = (row: Row) => ({
  id: String(row["id"]),
  run_id: String(row["runId"]),
  title: String(row["title"]),
  description: String(row["description"]),
  target_ref: row["targetRef"] === null ? null : String(row["targetRef"]),
  target_kind: String(row["targetKind"]),
  horizon: String(row["horizon"]),
  confidence: Number(row["confidence"]),
  success_criteria: strings(row["successCriteria"]),
  expiration_window_days: Number(row["expirationWindowDays"]),
  expires_at: iso(row["expiresAt"])!,
  status: String(row["status"]),
  supporting_evidence_ids: strings(row["supportingEvidenceIds"]),
  validation_notes: row["validationNotes"] === null ? null : String(row["validationNotes"]),
  resolved_at: iso(row["resolvedAt"]),
  created_at: iso(row["createdAt"])!
})

export const proposalView = (row: Row) => ({
  id: String(row["id"]),
  run_id: String(row["runId"]),
  proposal_type: String(row["proposalType"]),
  title: String(row["title"]),
  content: String(row["content"]),
  confidence: Number(row["confidence"]),
  tags: strings(row["tags"]),
  supporting_evidence_ids: strings(row["supportingEvidenceIds"]),
  rationale: row["rationale"] === null ? null : String(row["rationale"]),
  review_status: String(row["reviewStatus"]),
  approval_metadata: (row["approvalMetadata"] ?? {}) as Record<string, unknown>,
  reviewed_at: iso(row["reviewedAt"]),
  created_at: iso(row["createdAt"])!
})

export const outcomeView = (row: Row) => ({
  id: String(row["id"]),
  prediction_id: String(row["predictionId"]),
  status: String(row["status"]),
  note: row["note"] === null ? null : String(row["note"]),
  evidence_ids: strings(row["evidenceIds"]),
  recorded_by: String(row["recordedBy"]),
  created_at: iso(row["createdAt"])!
})

export const runView = (row: Row, predictions: ReadonlyArray<Row>, proposals: ReadonlyArray<Row>) => ({
  run_id: String(row["id"]),
  bank_id: String(row["bankId"]),
  status: String(row["status"]),
  run_type: row["runType"] as DreamRunType,
  trigger_source: row["triggerSource"] as DreamTriggerSource,
  created_at: iso(row["createdAt"])!,
  updated_at: iso(row["updatedAt"]),
  narrative_html: row["narrativeHtml"] === null ? null : String(row["narrativeHtml"]),
  summary: row["summary"] === null ? null : String(row["summary"]),
  evidence_basis: row["evidenceBasis"] as Record<string, unknown>,
  signals: row["signals"] as Record<string, unknown>,
  predictions: predictions.map(predictionView),
  growth_hypotheses: row["growthHypotheses"] as Array<unknown>,
  promotion_proposals: proposals.map(proposalView),
  validation_outcomes: row["validationOutcomes"] as Array<unknown>,
  confidence: row["confidence"] as Record<string, unknown>,
  novelty_score: Number(row["noveltyScore"]),
  maturity_tier: String(row["maturityTier"]),
  quality_score: Number(row["qualityScore"]),
  failure_reason: row["failureReason"] === null ? null : String(row["failureReason"]),
  legacy_run: false,
  source_artifact_id: null,
  generator: String(row["generator"])
})

export class DreamStore extends Context.Service<DreamStore, {
  readonly runOfOperation: (operationId: string) => Effect.Effect<Option.Option<Row>>
  readonly insertRun: (run: NewRun) => Effect.Effect<void>
  readonly listRuns: (bankId: string, limit: number) => Effect.Effect<ReadonlyArray<ReturnType<typeof runView>>>
  readonly history: (bankId: string, lookbackDays: number, now: Date) => Effect.Effect<History>
  /** When the newest run of this trigger source with one of these statuses was created. */
  readonly lastRunAt: (
    bankId: string,
    source: DreamTriggerSource,
    statuses: ReadonlyArray<DreamStatus>
  ) => Effect.Effect<Option.Option<Date>>
  readonly stats: (bankId: string) => Effect.Effect<Row>
  readonly prediction: (bankId: string, id: string) => Effect.Effect<Option.Option<Row>>
  /** Settles the prediction (only while it is still open when `onlyOpen`) and records the outcome, atomically. */
  readonly recordOutcome: (input: {
    readonly bankId: string
    readonly predictionId: string
    readonly predictionStatus: string
    readonly outcomeStatus: string
    readonly note: string | null
    readonly evidenceIds: ReadonlyArray<string>
    readonly recordedBy: "user" | "system"
    readonly onlyOpen: boolean
    readonly at: Date
  }) => Effect.Effect<Option.Option<{ readonly prediction: Row; readonly outcome: Row }>>
  readonly proposal: (bankId: string, id: string) => Effect.Effect<Option.Option<Row>>
  /** Moves the proposal to `status` unless it is already approved; none when it was approved meanwhile. */
  readonly reviewProposal: (
    bankId: string,
    id: string,
    status: string,
    note: string | null,
    metadata: Record<string, unknown>,
    at: Date
  ) => Effect.Effect<Option.Option<Row>>
  /** Sets status and metadata whatever the current status (the approval's own bookkeeping and its undo). */
  readonly settleProposal: (
    bankId: string,
    id: string,
    status: string,
    metadata: Record<string, unknown>
  ) => Effect.Effect<Option.Option<Row>>
  readonly duePredictions: (bankId: string, now: Date) => Effect.Effect<ReadonlyArray<Row>>
}>()("engram/dreams/DreamStore") {
  static readonly layer = Layer.effect(
    DreamStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const all = <A = Row>(query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.orDie) as Effect.Effect<ReadonlyArray<A>>
      const one = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        all(query).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

      const insertRun = Effect.fn("DreamStore.insertRun")(function*(run: NewRun) {
        yield* Effect.gen(function*() {
          yield* sql`INSERT INTO dream_runs ${
            sql.insert({
              id: run.id,
              bankId: run.bankId,
              operationId: run.operationId,
              status: run.status,
              runType: run.runType,
              triggerSource: run.triggerSource,
              generator: run.generator,
              summary: run.summary,
              narrativeHtml: run.narrativeHtml,
              evidenceBasis: JSON.stringify(run.evidenceBasis),
              signals: JSON.stringify(run.signals),
              growthHypotheses: JSON.stringify(run.growth),
              validationOutcomes: JSON.stringify(run.validations),
              confidence: JSON.stringify(run.confidence),
              noveltyScore: run.novelty,
              qualityScore: run.quality,
              maturityTier: run.maturityTier,
              failureReason: run.failureReason,
              evidenceIds: [...run.evidenceIds],
              inputTokens: run.inputTokens,
              outputTokens: run.outputTokens,
              metadata: JSON.stringify(run.metadata),
              createdAt: run.createdAt
            })
          }`
          for (const p of run.predictions) {
            yield* sql`INSERT INTO dream_predictions ${
              sql.insert({
                id: crypto.randomUUID(),
                bankId: run.bankId,
                runId: run.id,
                title: p.title,
                description: p.description,
                targetRef: p.target_ref,
                targetKind: p.target_kind,
                horizon: p.horizon,
                confidence: p.confidence,
                successCriteria: JSON.stringify(p.success_criteria),
                checkTerms: [...p.check_terms],
                supportingEvidenceIds: [...p.supporting_evidence_ids],
                expirationWindowDays: p.expiration_window_days,
                expiresAt: new Date(run.createdAt.getTime() + p.expiration_window_days * dayMillis),
                status: "pending",
                createdAt: run.createdAt
              })
            }`
          }
          for (const p of run.proposals) {
            yield* sql`INSERT INTO dream_proposals ${
              sql.insert({
                id: crypto.randomUUID(),
                bankId: run.bankId,
                runId: run.id,
                proposalType: p.proposal_type,
                title: p.title,
                content: p.content,
                confidence: p.confidence,
                tags: [...p.tags],
                supportingEvidenceIds: [...p.supporting_evidence_ids],
                rationale: p.rationale,
                reviewStatus: "pending",
                createdAt: run.createdAt
              })
            }`
          }
        }).pipe(sql.withTransaction, Effect.orDie)
      })

      const listRuns = Effect.fn("DreamStore.listRuns")(function*(bankId: string, limit: number) {
        const runs = yield* all(sql`SELECT * FROM dream_runs WHERE bank_id = ${bankId}
          ORDER BY created_at DESC, id LIMIT ${limit}`)
        if (runs.length === 0) return []
        const ids = runs.map((run) => String(run["id"]))
        const [predictions, proposals] = yield* Effect.all([
          all(sql`SELECT * FROM dream_predictions WHERE run_id IN ${sql.in(ids)} ORDER BY created_at, title`),
          all(sql`SELECT * FROM dream_proposals WHERE run_id IN ${sql.in(ids)} ORDER BY created_at, title`)
        ])
        return runs.map((run) =>
          runView(
            run,
            predictions.filter((p) => p["runId"] === run["id"]),
            proposals.filter((p) => p["runId"] === run["id"])
          )
        )
      })

      const history = Effect.fn("DreamStore.history")(function*(bankId: string, lookbackDays: number, now: Date) {
        const since = new Date(now.getTime() - lookbackDays * dayMillis)
        const [summaries, counts, outcomes] = yield* Effect.all([
          all(sql`SELECT summary FROM dream_runs WHERE bank_id = ${bankId} AND summary IS NOT NULL
            ORDER BY created_at DESC LIMIT 6`),
          all(sql`SELECT
              count(*) FILTER (WHERE status IN ('pending', 'unresolved'))::int AS unresolved,
              count(*) FILTER (WHERE status = 'confirmed')::int AS confirmed,
              count(*) FILTER (WHERE status = 'contradicted')::int AS contradicted
            FROM dream_predictions WHERE bank_id = ${bankId}`),
          all(sql`SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'confirmed')::int AS confirmed,
              count(*) FILTER (WHERE status = 'contradicted')::int AS contradicted
            FROM (SELECT status FROM dream_prediction_outcomes WHERE bank_id = ${bankId} AND created_at >= ${since}
              ORDER BY created_at DESC LIMIT 200) recent`)
        ])
        const c = counts[0] ?? {}
        const o = outcomes[0] ?? {}
        const total = Number(o["total"] ?? 0)
        const confirmedOutcomes = Number(o["confirmed"] ?? 0)
        const contradictedOutcomes = Number(o["contradicted"] ?? 0)
        return {
          recentSummaries: summaries.map((row) => String(row["summary"])),
          unresolved: Number(c["unresolved"] ?? 0),
          confirmed: Number(c["confirmed"] ?? 0),
          contradicted: Number(c["contradicted"] ?? 0),
          outcomes: total,
          outcomesConfirmed: confirmedOutcomes,
          validationRate: total === 0 ? 0 : confirmedOutcomes / total,
          calibration: total === 0 ? 0 : confirmedOutcomes / Math.max(confirmedOutcomes + contradictedOutcomes, 1)
        } satisfies History
      })

      const lastRunAt = (bankId: string, source: DreamTriggerSource, statuses: ReadonlyArray<DreamStatus>) =>
        one(sql`SELECT max(created_at) AS at FROM dream_runs WHERE bank_id = ${bankId}
          AND trigger_source = ${source} AND status IN ${sql.in([...statuses])}`).pipe(
          Effect.map((row) =>
            Option.flatMap(row, (r) => (r["at"] instanceof Date ? Option.some(r["at"]) : Option.none()))
          )
        )

      const stats = (bankId: string) =>
        one(sql`SELECT
            (SELECT count(*)::int FROM dream_runs WHERE bank_id = ${bankId}) AS total_runs,
            (SELECT max(created_at) FROM dream_runs WHERE bank_id = ${bankId}) AS last_run_at,
            (SELECT coalesce(avg(quality_score), 0)::float8 FROM dream_runs WHERE bank_id = ${bankId}) AS avg_quality,
            (SELECT coalesce(avg(input_tokens + output_tokens), 0)::float8 FROM dream_runs WHERE bank_id = ${bankId}) AS avg_tokens,
            (SELECT coalesce(avg(output_tokens), 0)::float8 FROM dream_runs WHERE bank_id = ${bankId}) AS avg_output_tokens,
            (SELECT coalesce(avg(novelty_score), 0)::float8 FROM dream_runs WHERE bank_id = ${bankId}) AS avg_novelty,
            (SELECT count(*)::int FROM dream_runs WHERE bank_id = ${bankId}
              AND status IN ('failed_llm', 'failed_validation')) AS failed_run_count,
            (SELECT count(*)::int FROM dream_runs WHERE bank_id = ${bankId}
              AND status = 'duplicate_low_novelty') AS duplicate_suppression_count,
            (SELECT count(*)::int FROM dream_predictions WHERE bank_id = ${bankId} AND status = 'confirmed') AS confirmed,
            (SELECT count(*)::int FROM dream_predictions WHERE bank_id = ${bankId} AND status = 'contradicted') AS contradicted,
            (SELECT count(*)::int FROM dream_predictions WHERE bank_id = ${bankId}
              AND status IN ('pending', 'unresolved')) AS backlog,
            (SELECT count(*)::int FROM dream_proposals WHERE bank_id = ${bankId} AND review_status = 'approved') AS distilled,
            (SELECT count(*)::int FROM dream_proposals WHERE bank_id = ${bankId} AND review_status <> 'pending') AS reviewed`)
          .pipe(Effect.map((row) => Option.getOrElse(row, () => ({}))))

      const recordOutcome: DreamStore["Service"]["recordOutcome"] = (input) =>
        Effect.gen(function*() {
          const updated = yield* one(sql`UPDATE dream_predictions SET status = ${input.predictionStatus},
              validation_notes = coalesce(${input.note}, validation_notes),
              resolved_at = ${input.predictionStatus === "unresolved" ? null : input.at}
            WHERE bank_id = ${input.bankId} AND id = ${input.predictionId}
              ${input.onlyOpen ? sql`AND status IN ('pending', 'unresolved')` : sql``}
            RETURNING *`)
          if (Option.isNone(updated)) return Option.none()
          const outcome = yield* one(sql`INSERT INTO dream_prediction_outcomes ${
            sql.insert({
              id: crypto.randomUUID(),
              bankId: input.bankId,
              predictionId: input.predictionId,
              status: input.outcomeStatus,
              note: input.note,
              evidenceIds: [...input.evidenceIds],
              recordedBy: input.recordedBy,
              createdAt: input.at
            })
          } RETURNING *`)
          return Option.some({ prediction: updated.value, outcome: Option.getOrThrow(outcome) })
        }).pipe(sql.withTransaction, Effect.orDie)

      const reviewProposal: DreamStore["Service"]["reviewProposal"] = (bankId, id, status, note, metadata, at) =>
        one(sql`UPDATE dream_proposals SET review_status = ${status}, rationale = coalesce(${note}, rationale),
            approval_metadata = ${JSON.stringify(metadata)}, reviewed_at = ${at}
          WHERE bank_id = ${bankId} AND id = ${id} AND review_status <> 'approved' RETURNING *`)

      return DreamStore.of({
        runOfOperation: (operationId) => one(sql`SELECT * FROM dream_runs WHERE operation_id = ${operationId}`),
        insertRun,
        listRuns,
        history,
        lastRunAt,
        stats,
        prediction: (bankId, id) => one(sql`SELECT * FROM dream_predictions WHERE bank_id = ${bankId} AND id = ${id}`),
        recordOutcome,
        proposal: (bankId, id) => one(sql`SELECT * FROM dream_proposals WHERE bank_id = ${bankId} AND id = ${id}`),
        reviewProposal,
        settleProposal: (bankId, id, status, metadata) =>
          one(sql`UPDATE dream_proposals SET review_status = ${status}, approval_metadata = ${JSON.stringify(metadata)}
            WHERE bank_id = ${bankId} AND id = ${id} RETURNING *`),
        duePredictions: (bankId, now) =>
          all(sql`SELECT p.*, r.created_at AS run_created_at FROM dream_predictions p
            JOIN dream_runs r ON r.id = p.run_id
            WHERE p.bank_id = ${bankId} AND p.status IN ('pending', 'unresolved') AND p.expires_at <= ${now}
            ORDER BY p.expires_at LIMIT 200`)
      })
    })
  )
}

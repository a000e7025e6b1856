/**
 * The bank's activity model, read from its access and write times: one event per recorded access (a recall, a
 * reflect, a mental-model read) and one per stored fact at the time it was said (`mentioned_at`, else when it was
 * stored). The sub-routine `build`s and stores it with the marks of the events it has folded in; an incremental
 * build adds only what came after the marks (and takes one more Kalman step), a rebuild recounts everything from
 * the tables and starts the filters and the HMM afresh. `current` is what a build would make now, without storing.
 * Activity learned from other engrams is kept beside the bank's own in the same row (`model.learned`, one entry
 * per source, replaced on each learn from it) and combined only when read (ActivityExchange's rule), so a rebuild
 * keeps it and the bank's own counts stay its own.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { EngramConfig } from "../config/EngramConfig.ts"
import { AccessTelemetry } from "./AccessTelemetry.ts"
import type { PredictionMode } from "../brain/BrainSettings.ts"
import { type ActivityState, emptyCounts, fittingHmm, initialHmm, initialKalman, kalmanStep } from "./ActivityModel.ts"
import { runSliced } from "../brain/Sliced.ts"
import { combine, type LearnedActivity, learnedOf, type LearnedSources } from "./ActivityExchange.ts"

/** Events the HMM is fitted on: the most recent ones. */
const hmmObservations = 2_000
/** The kinds of memory a person's activity writes (observations and opinions are the service's own). */
const writtenFacts = ["world", "experience"]

export interface ActivityView {
  readonly bankId: string
  readonly mode: PredictionMode
  /** Share of activity per UTC hour (24 entries, summing to 1, or all 0 without events). */
  readonly shares: ReadonlyArray<number>
  readonly sampleCount: number
  readonly sourceSnapshotId: string
  readonly modelSignature: string
  /** When the stored model was built; null when nothing was stored yet. */
  readonly builtAt: Date | null
  /** Events learned from other engrams (see ActivityExchange) and the weight they carry after the 1:1 cap. */
  readonly learnedEvents: number
  readonly learnedWeight: number
}

/** What one learn merged into the bank's activity model. */
export interface LearnedMerge {
  readonly source: string
  readonly remote_events: number
  /** Whether this source had been merged before (its counts were replaced, not added). */
  readonly replaced: boolean
  readonly learned_sources: number
  readonly learned_weight: number
  readonly own_events: number
}

export interface ActivityBuild extends ActivityView {
  /** Events folded in by this build (all of them when it rebuilt). */
  readonly newEvents: number
  readonly rebuilt: boolean
}

interface Marks {
  readonly access: number
  readonly memory: number
}

interface Stored {
  readonly state: ActivityState
  readonly learned: LearnedSources
  readonly marks: Marks
  readonly builtAt: Date
}

export class ActivityModels extends Context.Service<ActivityModels, {
  readonly current: (bankId: string) => Effect.Effect<ActivityView>
  readonly build: (bankId: string, options: { readonly rebuild: boolean }) => Effect.Effect<ActivityBuild>
  /** The bank's own model as it stands now (built and stored first when the bank has none), without learned counts. */
  readonly own: (bankId: string) => Effect.Effect<ActivityState>
  /** Stores `learned` as what `source` contributes, replacing that source's earlier counts. */
  readonly mergeLearned: (bankId: string, source: string, learned: LearnedActivity) => Effect.Effect<LearnedMerge>
}>()("engram/activity/ActivityModels") {
  static readonly layer = Layer.effect(
    ActivityModels,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = yield* EngramConfig
      const telemetry = yield* AccessTelemetry
      const mode = config.brain.predictionMode

      const stored = (bankId: string) =>
        sql<{ model: ActivityState; accessMark: number; memoryMark: number; builtAt: Date }>`
          SELECT model, access_mark::float8 AS access_mark, memory_mark::float8 AS memory_mark, built_at
          FROM brain_activity_models WHERE bank_id = ${bankId}`.pipe(
          Effect.map((rows) =>
            Option.fromNullishOr(rows[0]).pipe(Option.map((row): Stored => ({
              state: row.model,
              learned: learnedOf(row.model),
              marks: { access: row.accessMark, memory: row.memoryMark },
              builtAt: new Date(row.builtAt)
            })))
          )
        )

      const marksNow = (bankId: string) =>
        sql<{ access: number; memory: number }>`SELECT
            (SELECT coalesce(max(seq), 0) FROM memory_access_events WHERE bank_id = ${bankId})::float8 AS access,
            (SELECT coalesce(max(seq), 0) FROM memory_units WHERE bank_id = ${bankId})::float8 AS memory`.pipe(
          Effect.map((rows): Marks => rows[0] ?? { access: 0, memory: 0 })
        )

      /** Events per UTC hour with marks in (from, to]: accesses count once per read, facts once each. */
      const countsBetween = (bankId: string, from: Marks, to: Marks) =>
        sql<{ hour: number; n: number }>`
          SELECT hour, count(*)::int AS n FROM (
            SELECT extract(hour FROM min(accessed_at) AT TIME ZONE 'UTC')::int AS hour
            FROM memory_access_events
            WHERE bank_id = ${bankId} AND seq > ${from.access} AND seq <= ${to.access}
            GROUP BY access_id
            UNION ALL
            SELECT extract(hour FROM coalesce(mentioned_at, created_at) AT TIME ZONE 'UTC')::int
            FROM memory_units
            WHERE bank_id = ${bankId} AND seq > ${from.memory} AND seq <= ${to.memory}
              AND fact_type IN ${sql.in(writtenFacts)}
          ) events GROUP BY hour`.pipe(
          Effect.map((rows) => {
            const counts = emptyCounts()
            for (const row of rows) counts[row.hour] = (counts[row.hour] ?? 0) + row.n
            return counts
          })
        )

      /** The hours of the most recent events up to the marks, oldest first. */
      const recentHours = (bankId: string, to: Marks) =>
        sql<{ hour: number }>`
          SELECT extract(hour FROM at AT TIME ZONE 'UTC')::int AS hour FROM (
            SELECT min(accessed_at) AS at FROM memory_access_events
            WHERE bank_id = ${bankId} AND seq <= ${to.access} GROUP BY access_id
            UNION ALL
            SELECT coalesce(mentioned_at, created_at) FROM memory_units
            WHERE bank_id = ${bankId} AND seq <= ${to.memory} AND fact_type IN ${sql.in(writtenFacts)}
          ) events ORDER BY at DESC LIMIT ${hmmObservations}`.pipe(
          Effect.map((rows) => rows.map((row) => row.hour).reverse())
        )

      const compute = (bankId: string, rebuild: boolean) =>
        Effect.gen(function*() {
          const previous = yield* stored(bankId)
          const fresh = rebuild || Option.isNone(previous)
          const from: Marks = fresh ? { access: 0, memory: 0 } : previous.value.marks
          const to = yield* marksNow(bankId)
          const prior = fresh ? undefined : previous.value.state
          const added = yield* countsBetween(bankId, from, to)
          const newEvents = added.reduce((sum, n) => sum + n, 0)
          const counts = prior === undefined ? added : prior.counts.map((n, hour) => n + added[hour]!)
          // Nothing new: the stored model stands as built (a repeated GET changes nothing).
          const state: ActivityState = prior !== undefined && newEvents === 0 ? prior : {
            counts,
            sampleCount: counts.reduce((sum, n) => sum + n, 0),
            kalman: kalmanStep(prior?.kalman ?? initialKalman(), counts),
            hmm: yield* runSliced(
              fittingHmm(prior?.hmm ?? initialHmm(), yield* recentHours(bankId, to)),
              Effect.yieldNow
            )
          }
          return { state, marks: to, newEvents, rebuilt: fresh, previous }
        })

      const view = (
        bankId: string,
        state: ActivityState,
        learned: LearnedSources,
        marks: Marks,
        builtAt: Date | null
      ): ActivityView => {
        const combined = combine(mode, state, learned)
        const learnedStamp = Object.entries(learned).map(([source, entry]) => `${source}@${entry.merged_at}`).sort()
          .join(",")
        return {
          bankId,
          mode,
          shares: combined.shares,
          sampleCount: combined.sampleCount,
          sourceSnapshotId: createHash("sha256")
            .update(`${bankId}:${marks.access}:${marks.memory}:${state.sampleCount}:${mode}:${learnedStamp}`)
            .digest("hex"),
          modelSignature: `${mode}-v1`,
          builtAt,
          learnedEvents: combined.learnedEvents,
          learnedWeight: combined.learnedWeight
        }
      }

      const learnedIn = (previous: Option.Option<Stored>) => Option.isSome(previous) ? previous.value.learned : {}

      const current = Effect.fn("ActivityModels.current")(function*(bankId: string) {
        // What reads just recorded is written first, so the model counts them (and two reads in a row agree).
        yield* telemetry.writeBufferedOf(bankId)
        const computed = yield* compute(bankId, false)
        const builtAt = Option.isSome(computed.previous) && computed.newEvents === 0
          ? computed.previous.value.builtAt
          : null
        return view(bankId, computed.state, learnedIn(computed.previous), computed.marks, builtAt)
      }, Effect.orDie)

      const build = Effect.fn("ActivityModels.build")(
        function*(bankId: string, options: { readonly rebuild: boolean }) {
          yield* telemetry.writeBufferedOf(bankId)
          const computed = yield* compute(bankId, options.rebuild)
          const builtAt = new Date(yield* Clock.currentTimeMillis)
          const { learned: _learned, ...own } = computed.state as ActivityState & { learned?: unknown }
          const model = JSON.stringify(own)
          // The learned sources are the row's as it is now, not as read: a learn may have merged one meanwhile.
          const rows = yield* sql<{ model: unknown }>`
          INSERT INTO brain_activity_models (bank_id, model, access_mark, memory_mark, built_at)
          VALUES (${bankId}, ${model}::jsonb, ${computed.marks.access}, ${computed.marks.memory}, ${builtAt})
          ON CONFLICT (bank_id) DO UPDATE SET
            model = excluded.model || jsonb_build_object('learned', coalesce(brain_activity_models.model -> 'learned', '{}'::jsonb)),
            access_mark = excluded.access_mark, memory_mark = excluded.memory_mark, built_at = excluded.built_at
          RETURNING model`
          return {
            ...view(bankId, computed.state, learnedOf(rows[0]?.model), computed.marks, builtAt),
            newEvents: computed.newEvents,
            rebuilt: computed.rebuilt
          } satisfies ActivityBuild
        },
        Effect.orDie
      )

      const ensureStored = (bankId: string) =>
        Effect.flatMap(
          stored(bankId),
          (found) => Option.isSome(found) ? Effect.void : Effect.asVoid(build(bankId, { rebuild: false }))
        )

      const own = Effect.fn("ActivityModels.own")(function*(bankId: string) {
        yield* ensureStored(bankId)
        const { learned: _learned, ...state } = (yield* compute(bankId, false)).state as ActivityState & {
          learned?: unknown
        }
        return state as ActivityState
      }, Effect.orDie)

      const mergeLearned = Effect.fn("ActivityModels.mergeLearned")(function*(
        bankId: string,
        source: string,
        learned: LearnedActivity
      ) {
        yield* ensureStored(bankId)
        // One statement: a concurrent build keeps what this writes (its upsert re-reads the row's learned sources).
        const rows = yield* sql<{ model: ActivityState; replaced: boolean }>`
          UPDATE brain_activity_models AS updated
          SET model = jsonb_set(updated.model, '{learned}',
            coalesce(updated.model -> 'learned', '{}'::jsonb) || jsonb_build_object(${source}::text, ${
          JSON.stringify(learned)
        }::jsonb))
          FROM brain_activity_models AS before
          WHERE updated.bank_id = ${bankId} AND before.bank_id = updated.bank_id
          RETURNING updated.model, (before.model -> 'learned' -> ${source}::text) IS NOT NULL AS replaced`
        const row = rows[0]
        const sources = learnedOf(row?.model)
        const combined = combine(
          mode,
          row?.model ?? { counts: [], sampleCount: 0, kalman: initialKalman(), hmm: initialHmm() },
          sources
        )
        return {
          source,
          remote_events: learned.events,
          replaced: row?.replaced ?? false,
          learned_sources: Object.keys(sources).length,
          learned_weight: combined.learnedWeight,
          own_events: row?.model.sampleCount ?? 0
        } satisfies LearnedMerge
      }, Effect.orDie)

      return ActivityModels.of({ current, build, own, mergeLearned })
    })
  )
}

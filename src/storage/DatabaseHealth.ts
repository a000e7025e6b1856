/**
 * Whether the database answers, for `/health`, without making the health check wait behind the database's work. A
 * probe (`SELECT 1`) runs in the background, one at a time; the check waits for it only briefly. A probe still out
 * because the one embedded session is busy with a long job (a repo branch, a bulk import) means the database is
 * busy, not down: the service is healthy and says `busy`, until the probe has waited longer than `stallAfter`.
 * A failed probe, or one stalled past that, is unhealthy. So an orchestrator's liveness check neither stalls with
 * the database nor restarts a service in the middle of a long job.
 *
 * A probe that answered "ok" within the last `freshFor` is the answer: the check starts the next probe and returns at
 * once, without a round trip to the database's thread. On a busy event loop that round trip (and the reply waiting its
 * turn) was most of a health check's time: p99 45–136 ms on a quiet 2-core machine with one client recalling,
 * against 50 ms for the whole check.
 */
import { Clock, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"

export type DatabaseState =
  | { readonly _tag: "ok" }
  | { readonly _tag: "busy"; readonly waitingMillis: number }
  | { readonly _tag: "down"; readonly reason: string }

export interface DatabaseHealthOptions {
  /** How long the check waits for a probe before answering from what it knows. Default 25 ms. */
  readonly answerWithin?: Duration.Input
  /** A probe unanswered for this long means the database is not merely busy. Default 5 minutes. */
  readonly stallAfter?: Duration.Input
  /** How long an "ok" probe answers checks by itself. Default 1 s. */
  readonly freshFor?: Duration.Input
}

export class DatabaseHealth extends Context.Service<DatabaseHealth, {
  readonly check: Effect.Effect<DatabaseState>
}>()("engram/storage/DatabaseHealth") {
  static readonly layerWith = (options: DatabaseHealthOptions = {}) =>
    Layer.effect(
      DatabaseHealth,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const scope = yield* Effect.scope
        const answerWithin = Duration.fromInputUnsafe(options.answerWithin ?? Duration.millis(25))
        const stallAfter = Duration.toMillis(Duration.fromInputUnsafe(options.stallAfter ?? Duration.minutes(5)))
        let probe: { readonly since: number; readonly done: Deferred.Deferred<DatabaseState> } | undefined
        const freshFor = Duration.toMillis(Duration.fromInputUnsafe(options.freshFor ?? Duration.seconds(1)))
        let last: DatabaseState = { _tag: "ok" }
        /** When the last probe finished (never: 0, so the first check waits for one). */
        let lastAt = 0

        /** The probe in flight, or a new one when none is. */
        const current = Effect.gen(function*() {
          if (probe !== undefined) return probe
          const started = { since: yield* Clock.currentTimeMillis, done: Deferred.makeUnsafe<DatabaseState>() }
          probe = started
          yield* sql`SELECT 1 AS ok`.pipe(
            Effect.as<DatabaseState>({ _tag: "ok" }),
            Effect.catchCause(() => Effect.succeed<DatabaseState>({ _tag: "down", reason: "the health query failed" })),
            Effect.flatMap((state) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.sync(() => {
                  last = state
                  lastAt = now
                  probe = undefined
                  Deferred.doneUnsafe(started.done, Effect.succeed(state))
                }))
            ),
            Effect.withTracerEnabled(false),
            Effect.forkIn(scope)
          )
          return started
        })

        const check = Effect.gen(function*() {
          const running = yield* current
          if (last._tag === "ok" && (yield* Clock.currentTimeMillis) - lastAt <= freshFor) return last
          const answered = yield* Deferred.await(running.done).pipe(Effect.timeoutOption(answerWithin))
          if (Option.isSome(answered)) return answered.value
          const waiting = (yield* Clock.currentTimeMillis) - running.since
          if (waiting > stallAfter) {
            return {
              _tag: "down",
              reason: `the database has not answered for ${Math.round(waiting / 1000)} s`
            } as const
          }
          // A probe behind a long job: what the last finished probe said, unless it was fine (then: busy).
          return last._tag === "down" ? last : { _tag: "busy", waitingMillis: waiting } as const
        })

        return DatabaseHealth.of({ check })
      })
    )

  static readonly layer = DatabaseHealth.layerWith()
}

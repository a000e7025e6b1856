/**
 * The trance schedule as a real process killed with SIGKILL. A scheduled run killed while its model call hangs runs
 * once after restart (not again from the schedule); a run that fell due while the process was down runs once at
 * the next start, and a further restart does not run it a second time. The model is a scripted server on loopback.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseLive } from "../../layers/Database.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { type Child, freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { scriptedOpenAi } from "../support/ScriptedOpenAi.ts"
import { freshDatabaseSettings } from "../support/TestDatabase.ts"
import { eventually } from "../support/TestTasks.ts"

const json = (url: string, method = "GET", body?: unknown) =>
  Effect.promise(() =>
    fetch(url, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, body: await response.json() as any }))
  )

const waitFor = <A>(probe: Effect.Effect<A>, check: (value: A) => boolean, what: string, millis = 60_000) =>
  eventually(probe, check, Duration.millis(millis), { what, interval: "100 millis" })

const answer = {
  summary: "Noor's evening walks with Pepper along the canal are a fixed routine.",
  predicted_next_events: [{
    title: "Noor walks Pepper again",
    description: "The routine holds.",
    target_ref: "Noor",
    horizon: "near_term",
    confidence: 0.7,
    success_criteria: ["A memory of another walk."],
    expiration_window_days: 7
  }],
  narrative: "Because the routine is steady the next prediction is another walk; validation: a new memory. Risk: " +
    "weather. Opportunity: longer routes. Growth: fitness. Confidence moderate."
}

describe("trance schedule across SIGKILL", () => {
  it.live(
    "a due trance run happens exactly once across kills and restarts",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const scripted = yield* scriptedOpenAi
        const settings = freshDatabaseSettings()
        const env: Record<string, string> = {
          SERVICE_API_DATA_DIR: settings.dataDir!,
          SERVICE_API_PORT: String(yield* freePort),
          SERVICE_API_ENABLE_OBSERVATIONS: "false",
          SERVICE_API_REFLECT_LLM_PROVIDER: "openai",
          SERVICE_API_REFLECT_LLM_BASE_URL: scripted.baseUrl,
          SERVICE_API_REFLECT_LLM_MODEL: "dreamer",
          SERVICE_API_LLM_MAX_RETRIES: "0"
        }
        if (settings.databaseUrl && Option.isSome(settings.databaseUrl)) {
          env["SERVICE_API_DATABASE_URL"] = Redacted.value(settings.databaseUrl.value)
          env["SERVICE_API_DATABASE_SCHEMA"] = settings.databaseSchema!
        }
        const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
        const bank = `${url}/v1/default/banks/trance`
        const runs = json(`${bank}/dreams`).pipe(Effect.map((r) => r.body.items as Array<any>))
        const dreamOperations = json(`${bank}/operations?task_type=dream_generation&limit=100`).pipe(
          Effect.map((r) => r.body.operations as Array<any>)
        )
        const start = Effect.gen(function*() {
          const child = yield* spawnService("src/main.ts", env)
          yield* waitForHealth(url, child)
          return child
        })
        const kill = (child: Child) =>
          Effect.promise(() => {
            child.process.kill("SIGKILL")
            return child.exited
          })

        // 1. Trance on: the first scheduled run is due at once; its model call hangs and the process is killed.
        scripted.setFallback({ hang: true })
        const first = yield* start
        const retained = yield* json(`${bank}/memories`, "POST", {
          items: [
            "Noor walked Pepper along the canal on Monday evening.",
            "Noor walked Pepper along the canal on Wednesday evening.",
            "Noor and Pepper met a heron at the canal lock."
          ].map((content) => ({ content }))
        })
        assert.strictEqual(retained.status, 200, JSON.stringify(retained.body))
        const patched = yield* json(`${bank}/config`, "PATCH", {
          dream: {
            enabled: true,
            trance_enabled: true,
            trigger_mode: "cron",
            cron_interval_minutes: 5,
            cooldown_minutes: 5,
            quality_threshold: 0.3
          }
        })
        assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        yield* waitFor(
          Effect.sync(() => scripted.chatRequests().length),
          (n) => n >= 1,
          "the trance run never called the model"
        )
        yield* kill(first)

        // 2. After restart the interrupted run completes once; the schedule (next due in 5 minutes) adds none.
        scripted.setFallback({ content: JSON.stringify(answer) })
        const second = yield* start
        const afterRestart = yield* waitFor(runs, (items) => items.length >= 1, "no run after restart")
        assert.deepInclude(afterRestart[0], { run_type: "trance", trigger_source: "cron", generator: "llm" })
        yield* Effect.sleep("3 seconds")
        assert.strictEqual((yield* runs).length, 1)
        const operations = yield* dreamOperations
        assert.strictEqual(operations.length, 1, JSON.stringify(operations))
        yield* kill(second)

        // 3. While the process is down the next run falls due (time moved on by the interval, and past the cooldown).
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE dream_schedules SET next_due_at = now() - interval '1 minute' WHERE bank_id = 'trance'`
          yield* sql`UPDATE dream_runs SET created_at = created_at - interval '10 minutes' WHERE bank_id = 'trance'`
        }).pipe(Effect.provide(DatabaseLive.pipe(Layer.provide(EngramConfig.layerWith(settings)))), Effect.scoped)
        const third = yield* start
        yield* waitFor(runs, (items) => items.length >= 2, "the run that fell due while down never ran")
        yield* Effect.sleep("3 seconds")
        assert.strictEqual((yield* runs).length, 2)
        yield* kill(third)

        // 4. Another restart: nothing is due, nothing runs twice.
        yield* start
        yield* Effect.sleep("4 seconds")
        const final = yield* runs
        assert.strictEqual(final.length, 2, JSON.stringify(final.map((r) => r.created_at)))
        assert.isTrue(final.every((run) => run.trigger_source === "cron" && run.run_type === "trance"))
        assert.strictEqual((yield* dreamOperations).length, 2)
      })),
    240_000
  )
})

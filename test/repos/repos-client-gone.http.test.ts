/**
 * A sliced enable and a sliced fork finish when the client that asked for them goes away: over the real HTTP server
 * on both tiers, the request is aborted once the job has begun its slices (as a client's timeout or a closed
 * connection would), no other call is made, and the job still ends — the repo with its initial commit and a clean
 * status, the fork with its job row gone and the source's memories. Before, the job ran in the request's fiber and
 * stopped part-way until the next call or the next start.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { enableTuning } from "../../src/repos/SlicedEnable.ts"
import { forkTuning } from "../../src/repos/SlicedFork.ts"
import { bankPath, ok, settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const source = "client-gone-src"
const people = ["Ada", "Boris", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hugo"]
const places = ["Oslo", "Porto", "Quito", "Riga", "Seoul", "Tunis", "Lima", "Accra"]

/** Sends the request and aborts it once `begun` holds (polled), as a client that gives up would. */
const abandoned = <A>(path: string, body: unknown, begun: Effect.Effect<A>, until: (a: A) => boolean) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const controller = new AbortController()
    const sent = fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: controller.signal
    }).then((response) => response.status, () => "aborted" as const)
    yield* eventually(begun, until, Duration.seconds(60), { what: "the job began its slices", interval: "5 millis" })
    controller.abort()
    assert.strictEqual(yield* Effect.promise(() => sent), "aborted", "the client left before the answer")
  })

const memoryTexts = (bankId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ text: string }>`SELECT text FROM memory_units WHERE bank_id = ${bankId} ORDER BY text`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map((row) => row.text))
      )
  )

layer(testApp(), { excludeTestServices: true, timeout: "5 minutes" })("memory repos: the client goes away", (it) => {
  it.effect("an enable and a fork a client abandoned part-way still finish", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* ok("PUT", bankPath(source), { name: source })
      const items = Array.from({ length: 60 }, (_, i) => ({
        content: `${people[i % 8]} met ${people[(i * 3 + 1) % 8]} in ${places[(i * 5) % 8]} on day ${i}.`
      }))
      yield* ok("POST", `${bankPath(source)}/memories`, { items })
      yield* settled(source)

      // Many slices of a few rows each, so the enable is still running when the client leaves.
      const savedEnable = { ...enableTuning }
      const savedFork = forkTuning.sliceRows
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          Object.assign(enableTuning, savedEnable)
          forkTuning.sliceRows = savedFork
        })
      )
      Object.assign(enableTuning, { sliceRows: 7, sliceBuckets: 5 })
      const progress = sql<{ repoId: string; done: number | null }>`
        SELECT repo_id, (enable_progress->>'rowsDone')::int AS done FROM memory_repos WHERE root_bank_id = ${source}`
        .pipe(Effect.orDie)
      yield* abandoned(
        `${bankPath(source)}/repos/enable`,
        {},
        progress,
        (rows) => rows.length === 1 && (rows[0]!.done ?? 0) > 0
      )
      const repoId = (yield* progress)[0]!.repoId
      const finished = yield* eventually(
        ok("GET", `/v1/default/repos/${repoId}/status`),
        (status) => status.body.enabling === undefined,
        Duration.seconds(40),
        { what: "the abandoned enable finished by itself" }
      )
      assert.strictEqual(finished.body.dirty, false, finished.text)
      assert.isString(finished.body.head_commit_id, finished.text)

      // The same for a fork of the repo into a new bank.
      forkTuning.sliceRows = 20
      const target = "client-gone-fork"
      const job = sql<{ n: number }>`SELECT count(*)::int AS n FROM repo_forks WHERE target_bank_id = ${target}`
        .pipe(Effect.orDie, Effect.map((rows) => rows[0]!.n))
      const forkProgress = sql<{ phase: string; table: number }>`SELECT progress->>'phase' AS phase,
          (progress->>'table')::int AS table FROM repo_forks WHERE target_bank_id = ${target}`.pipe(Effect.orDie)
      yield* abandoned(
        `/v1/default/repos/${repoId}/fork-bank`,
        { target_bank_id: target },
        forkProgress,
        (rows) => rows.length === 1 && (rows[0]!.phase !== "ids" || rows[0]!.table > 0)
      )
      yield* eventually(job, (n) => n === 0, Duration.seconds(40), { what: "the abandoned fork finished by itself" })
      assert.deepStrictEqual(yield* memoryTexts(target), yield* memoryTexts(source))
    }))
})

/**
 * Cancelling a codebase import leaves no pending or half-built snapshot: a cancelled first import removes its
 * snapshot and the codebase it created; a cancelled re-import removes only the new snapshot (with any rows a
 * half-run attempt wrote) and the codebase keeps its built one. A retry of the cancelled operation fails
 * cleanly instead of resurrecting the snapshot. The bank's actor is held by a blocking test task so the import
 * is still queued when it is cancelled.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { Operations } from "../../src/bank/Operations.ts"
import { codebasesPath, settled, upload } from "../support/CodebaseClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../support/TestTasks.ts"
import { makeZip } from "../support/ZipWriter.ts"

const app = testApp({ codebases: { ...defaultCodebaseSettings, parseWorkers: 1 } }, TestTaskHandlers)
const bank = "cb-cancel"
const operationsPath = `/v1/default/banks/${bank}/operations`

const archive = (body: string) =>
  makeZip([{ name: "app/main.ts", data: `export function main() { return ${body} }\n` }, {
    name: "app/util.py",
    data: "def util():\n    return 1\n"
  }])

/** Occupies the bank's actor with a task that waits until released, so the next operation stays pending. */
const holdBank = (key: string) =>
  Effect.gen(function*() {
    const operations = yield* Operations
    const server = yield* TestServer
    const held = yield* operations.submit({ bankId: bank, taskType: "test_block", payload: { key } })
    yield* eventually(server.request("GET", `${operationsPath}/${held.id}`), (r) => r.body.status === "running")
    return held.id
  })

const release = (key: string) =>
  Effect.gen(function*() {
    yield* eventually(Effect.sync(() => TestTasks.blockers.get(key)), (gate) => gate !== undefined)
    yield* Deferred.succeed(TestTasks.blockers.get(key)!, undefined)
  })

const countRows = (table: string, snapshotId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${sql(table)} WHERE ${
      sql(table === "codebase_snapshots" ? "id" : "snapshot_id")
    } = ${snapshotId}`
    return rows[0]!.count
  }).pipe(Effect.orDie)

layer(app, { excludeTestServices: true })("cancelling a codebase import", (it) => {
  it.effect("a cancelled first import removes its pending snapshot and the codebase it created", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", `/v1/default/banks/${bank}`, { json: {} })
      yield* holdBank("cb-hold-1")
      const started = yield* upload(server, `${codebasesPath(bank)}/import/zip`, "archive", "app.zip", archive("1"), {
        name: "first"
      })
      assert.strictEqual(started.status, 200, started.text)
      assert.strictEqual(yield* countRows("codebase_snapshots", started.body.snapshot_id), 1)

      const cancelled = yield* server.request("DELETE", `${operationsPath}/${started.body.operation_id}`)
      assert.strictEqual(cancelled.status, 200)
      assert.strictEqual(cancelled.body.status, "cancelled")
      assert.strictEqual(yield* countRows("codebase_snapshots", started.body.snapshot_id), 0)
      assert.strictEqual(
        (yield* server.request("GET", `${codebasesPath(bank)}/${started.body.codebase_id}`)).status,
        404
      )
      assert.deepStrictEqual((yield* server.request("GET", codebasesPath(bank))).body.items, [])

      // The name is free again, and a retry of the cancelled operation fails instead of building a ghost.
      yield* release("cb-hold-1")
      const retried = yield* server.request("POST", `${operationsPath}/${started.body.operation_id}/retry`)
      assert.strictEqual(retried.status, 200)
      const retriedDetail = yield* settled(server, bank, started.body.operation_id)
      assert.strictEqual(retriedDetail.status, "failed")
      assert.include(retriedDetail.error_message, "no longer exists")
      const again = yield* upload(server, `${codebasesPath(bank)}/import/zip`, "archive", "app.zip", archive("1"), {
        name: "first"
      })
      assert.strictEqual(again.status, 200, again.text)
      assert.strictEqual((yield* settled(server, bank, again.body.operation_id)).status, "completed")
    }))

  it.effect("a cancelled re-import removes its half-built snapshot and keeps the codebase's built one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      yield* server.request("PUT", `/v1/default/banks/${bank}`, { json: {} })
      const first = yield* upload(server, `${codebasesPath(bank)}/import/zip`, "archive", "app.zip", archive("1"), {
        name: "kept"
      })
      assert.strictEqual((yield* settled(server, bank, first.body.operation_id)).status, "completed")
      const builtFiles = yield* countRows("codebase_files", first.body.snapshot_id)
      assert.isAbove(builtFiles, 0)

      yield* holdBank("cb-hold-2")
      const second = yield* upload(server, `${codebasesPath(bank)}/import/zip`, "archive", "app.zip", archive("2"), {
        name: "kept",
        refresh_existing: true
      })
      assert.strictEqual(second.status, 200, second.text)
      assert.strictEqual(second.body.codebase_id, first.body.codebase_id)
      // What an attempt interrupted half way leaves: the snapshot processing, some of its rows written.
      yield* sql`UPDATE codebase_snapshots SET status = 'processing' WHERE id = ${second.body.snapshot_id}`.pipe(
        Effect.orDie
      )
      yield* sql`INSERT INTO codebase_files (snapshot_id, path, language, status, file_role, content_hash, change_kind, line_count, chunk_count)
        VALUES (${second.body.snapshot_id}, 'app/main.ts', 'typescript', 'indexed', 'source', 'x', 'modified', 1, 0)`
        .pipe(Effect.orDie)

      const cancelled = yield* server.request("DELETE", `${operationsPath}/${second.body.operation_id}`)
      assert.strictEqual(cancelled.body.status, "cancelled")
      assert.strictEqual(yield* countRows("codebase_snapshots", second.body.snapshot_id), 0)
      assert.strictEqual(yield* countRows("codebase_files", second.body.snapshot_id), 0)
      const codebase = (yield* server.request("GET", `${codebasesPath(bank)}/${first.body.codebase_id}`)).body
      assert.strictEqual(codebase.current_snapshot_id, first.body.snapshot_id)
      assert.strictEqual(codebase.snapshot_status, "review_required")
      assert.strictEqual(yield* countRows("codebase_files", first.body.snapshot_id), builtFiles)
      yield* release("cb-hold-2")
    }))
})

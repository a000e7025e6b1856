/**
 * A big bank's brain survives a restart in its `.brain` file: after a SIGKILL the next service loads the file
 * (written here by an export) and catches up from the tables (memories added after the file was written are
 * seen; every deletion of facts now removes the kept file, see ReplaceDerived.test.ts) instead of building; a graceful stop writes the file when it is behind,
 * so the next start loads it with nothing to catch up; a damaged file is built around. Memories edited after the file
 * (text, entities) are answered after a SIGKILL as a brain built fresh from the tables answers them. A big bank's HNSW
 * index is kept beside the file and read back instead of built again; deleting the bank removes both.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type Child, freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { freshServiceEnv } from "../support/TestDatabase.ts"

const bank = "kept"

const request = (url: string, method: string, path: string, json?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/v1/default/banks/${bank}${path}`, {
      method,
      ...(json === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(json) })
    })
    const text = await response.text()
    assert.isTrue(response.ok, `${method} ${path}: ${response.status} ${text}`)
    return text === "" ? undefined : JSON.parse(text)
  })

const status = (url: string) => request(url, "GET", "/brain/status")

const recall = (url: string, query: string) =>
  Effect.map(
    request(url, "POST", "/memories/recall", { query, budget: "mid" }),
    (answer): Array<string> => answer.results.map((result: { id: string }) => result.id)
  )

const stopped = (child: Child, signal: NodeJS.Signals) =>
  Effect.promise(() => {
    child.process.kill(signal)
    return child.exited
  })

/** A fresh service that keeps brain files from 20 memories on, and how to start it (again) on its port and data. */
const keepingService = Effect.gen(function*() {
  const port = yield* freePort
  const url = `http://127.0.0.1:${port}`
  const env = freshServiceEnv({
    SERVICE_API_PORT: String(port),
    SERVICE_API_ENABLE_OBSERVATIONS: "false",
    SERVICE_API_BRAIN_KEEP_FILES_MIN_MEMORIES: "20"
  })
  const start = Effect.gen(function*() {
    const child = yield* spawnService("src/main.ts", env)
    yield* waitForHealth(url, child)
    return child
  })
  return { url, env, start }
})

/**
 * Forty memories retained and recalled, then the brain exported: the file a brain is kept in is written on release
 * (after idle minutes), at a stop, or as here by an export.
 */
const keptFileWritten = (url: string) =>
  Effect.gen(function*() {
    yield* request(url, "POST", "/memories", {
      items: Array.from({ length: 40 }, (_, n) => ({
        content: `Greenhouse ${n % 7} grew ${n * 3} tomatoes in week ${n} under lamp ${n % 5}.`
      }))
    })
    yield* recall(url, "tomatoes in greenhouse 3")
    const exported = yield* Effect.promise(() => fetch(`${url}/v1/default/banks/${bank}/brain/export`))
    assert.strictEqual(exported.status, 200)
    yield* Effect.promise(() => exported.arrayBuffer())
  })

describe("the brain kept in its file", () => {
  it.live(
    "is loaded and caught up after a SIGKILL, and written on a graceful stop",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, env, start } = yield* keepingService

        const first = yield* start
        yield* keptFileWritten(url)
        const written = yield* status(url)
        assert.isNull(written.compatibility_reason)
        assert.strictEqual(written.metrics.builds, 1)
        assert.strictEqual(written.metrics.file_writes, 1)

        // After the file: new memories, one of them appended to a document, then a crash (no file written at stop).
        // No deletion: a delete, a document replaced or an invalidation removes the kept file (DeleteDerived.test.ts,
        // ReplaceDerived.test.ts).
        yield* request(url, "POST", "/memories", {
          items: [
            { content: "The pumpkin patch behind greenhouse 9 flooded on Tuesday." },
            { content: "Basil seedlings were moved into greenhouse 4 by Marguerite.", document_id: "kept-doc" }
          ]
        })
        yield* request(url, "POST", "/memories", {
          items: [{
            content: "Chives were planted in greenhouse 6 on Friday.",
            document_id: "kept-doc",
            update_mode: "append"
          }]
        })
        const pumpkins = yield* recall(url, "pumpkin patch flooded")
        const tomatoes = yield* recall(url, "tomatoes in greenhouse 3")
        const basil = yield* recall(url, "basil seedlings Marguerite")
        yield* stopped(first, "SIGKILL")

        const second = yield* start
        assert.deepStrictEqual(yield* recall(url, "pumpkin patch flooded"), pumpkins)
        assert.deepStrictEqual(yield* recall(url, "tomatoes in greenhouse 3"), tomatoes)
        assert.deepStrictEqual(yield* recall(url, "basil seedlings Marguerite"), basil)
        const loaded = yield* status(url)
        assert.strictEqual(loaded.metrics.builds, 0, "the brain was built from the tables instead of loaded")
        assert.strictEqual(loaded.metrics.file_loads, 1)
        assert.isAtLeast(loaded.metrics.incremental_updates, 1, "the file was not caught up")
        assert.isNotNull(loaded.compatibility_reason, "the file should still be behind the bank")
        yield* stopped(second, "SIGTERM")

        // The graceful stop wrote the file: the next start loads it with nothing to catch up.
        const third = yield* start
        assert.isNull((yield* status(url)).compatibility_reason)
        assert.deepStrictEqual(yield* recall(url, "pumpkin patch flooded"), pumpkins)
        const current = yield* status(url)
        assert.strictEqual(current.metrics.builds, 0)
        assert.strictEqual(current.metrics.file_loads, 1)
        assert.strictEqual(current.metrics.incremental_updates, 0)
        yield* stopped(third, "SIGTERM")

        // A damaged file costs a build, never a wrong answer or a failed recall.
        writeFileSync(join(env["SERVICE_API_DATA_DIR"]!, "brain", current.file_path), "not a brain file")
        const fourth = yield* start
        assert.deepStrictEqual(yield* recall(url, "pumpkin patch flooded"), pumpkins)
        const rebuilt = yield* status(url)
        assert.strictEqual(rebuilt.metrics.builds, 1)
        assert.strictEqual(rebuilt.metrics.file_loads, 0)
        assert.strictEqual(rebuilt.metrics.sql_fallbacks, 0)
        yield* stopped(fourth, "SIGTERM")
      })),
    180_000
  )

  it.live(
    "answers a memory edited after the file as the database says, after a SIGKILL",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, env, start } = yield* keepingService
        const queries = [
          "tomatoes in greenhouse 3",
          "cucumbers under the blue lamp",
          "week 12 harvest",
          "lamp 4 greenhouse 2",
          "which greenhouse flooded",
          "Marguerite",
          "what happened in Greenhouse 2"
        ]
        const answers = Effect.forEach(queries, (query) => recall(url, query))

        const first = yield* start
        yield* keptFileWritten(url)
        assert.strictEqual((yield* status(url)).metrics.file_writes, 1)

        // Edits after the file was written: one memory's text (re-embedded, its links derived anew), another's too.
        const listed = yield* request(url, "GET", "/memories/list?limit=100")
        const ids: Array<string> = listed.items.map((item: { id: string }) => item.id)
        yield* request(url, "PATCH", `/memories/${ids[3]}`, {
          text: "Greenhouse 2 grew cucumbers under the blue lamp and flooded in week 12."
        })
        yield* request(url, "PATCH", `/memories/${ids[17]}`, { text: "The week 12 harvest filled forty crates." })
        // And one memory's entities alone (no column of its row changes): its mentions and entity links do.
        yield* request(url, "PATCH", `/memories/${ids[25]}`, { entities: ["Marguerite", "Greenhouse 2"] })
        const before = yield* answers
        yield* stopped(first, "SIGKILL")

        const second = yield* start
        const restarted = yield* answers
        const loaded = yield* status(url)
        assert.strictEqual(loaded.metrics.file_loads, 1, "the kept file was not loaded")
        yield* stopped(second, "SIGKILL")

        // A brain built fresh from the tables is what the database says.
        const file = join(env["SERVICE_API_DATA_DIR"]!, "brain", loaded.file_path)
        rmSync(file, { force: true })
        const third = yield* start
        const fresh = yield* answers
        assert.strictEqual((yield* status(url)).metrics.builds, 1)
        yield* stopped(third, "SIGTERM")

        assert.deepStrictEqual(restarted, fresh, "the restarted service answers otherwise than a fresh build")
        assert.deepStrictEqual(before, fresh, "the running service answered otherwise than a fresh build")
      })),
    240_000
  )

  it.live(
    "keeps a big bank's vector index with its file and reads it back at the next start; a bank deleted takes both",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, env, start } = yield* keepingService
        const directory = join(env["SERVICE_API_DATA_DIR"]!, "brain")
        const queries = ["tomatoes in greenhouse 3", "lamp 4 in week 90", "crates of basil", "greenhouse 11 flooded"]
        const answers = Effect.forEach(queries, (query) => recall(url, query))

        const first = yield* start
        // Past 2,500 vectors of 100 dimensions a bank's nearest neighbours come from an HNSW index.
        for (let batch = 0; batch < 13; batch++) {
          yield* request(url, "POST", "/memories", {
            items: Array.from({ length: 200 }, (_, i) => {
              const n = batch * 200 + i
              return {
                content: `Greenhouse ${n % 13} grew ${n % 97} crates of ${
                  ["tomatoes", "basil", "kale"][n % 3]
                } in week ${n} under lamp ${n % 5}.`
              }
            })
          })
        }
        yield* recall(url, "tomatoes")
        let indexed = yield* status(url)
        for (let tries = 0; indexed.metrics.vector_index !== "ready" && tries < 600; tries++) {
          yield* Effect.sleep("50 millis")
          indexed = yield* status(url)
        }
        assert.strictEqual(indexed.metrics.vector_index, "ready")
        assert.strictEqual(indexed.metrics.vector_index_builds, 1)
        const before = yield* answers
        // The graceful stop writes the file, and the index beside it.
        yield* stopped(first, "SIGTERM")
        const kept = readdirSync(directory)
        assert.deepStrictEqual(kept.filter((name) => name.endsWith(".brain")), ["kept.brain"])
        assert.strictEqual(kept.filter((name) => /^kept\.[0-9a-f]{32}\.hnsw$/.test(name)).length, 1, kept.join(", "))

        const second = yield* start
        assert.deepStrictEqual(yield* answers, before)
        const loaded = yield* status(url)
        assert.strictEqual(loaded.metrics.file_loads, 1)
        assert.strictEqual(loaded.metrics.vector_index_loads, 1)
        assert.strictEqual(loaded.metrics.vector_index_builds, 0, "the index was built again")
        assert.strictEqual(loaded.metrics.vector_index, "ready")

        // The bank's memories live on in both files: deleting the bank removes them.
        const deleted = yield* Effect.promise(() => fetch(`${url}/v1/default/banks/${bank}`, { method: "DELETE" }))
        assert.isTrue(deleted.ok)
        assert.deepStrictEqual(readdirSync(directory).filter((name) => name.startsWith("kept.")), [])
        yield* stopped(second, "SIGTERM")
      })),
    240_000
  )
})

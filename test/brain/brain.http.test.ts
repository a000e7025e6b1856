/**
 * The brain runtime over HTTP: a `.brain` export round-trips through validate and import byte for byte and is
 * installed without a rebuild; every refusal reason comes from damaging a real exported file; a version-1 fixture
 * stays readable; a bank mismatch is a 400; the circuit breaker goes closed → open → half-open → open → closed
 * while recall keeps answering from SQL; disabled routes answer 404 naming their setting.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { crc32 } from "node:zlib"
import { BrainFaults } from "../../src/brain/BrainBreaker.ts"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`
const maxFileBytes = 2_000_000

/** Banks whose brain builds fail, switched by the breaker test. */
const failing = new Set<string>()
const faults = Layer.succeed(BrainFaults, { failBuild: (bankId: string) => failing.has(bankId) })

const app = testApp({
  brain: { ...defaultBrainSettings, maxFileBytes, breakerFailures: 3, breakerCoolDown: Duration.millis(600) }
}).pipe(Layer.provide(faults))

const retain = (bankId: string, contents: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `${bank(bankId)}/memories`, {
      json: { items: contents.map((content) => ({ content })) }
    })
    assert.strictEqual(response.status, 200, response.text)
  })

const facts = [
  "Alice repaired the telescope at the Lisbon observatory on Monday.",
  "Bob ordered a new lens for the telescope from a shop in Porto.",
  "The observatory opens to visitors every Friday evening.",
  "Carol wrote the star catalogue that the observatory still uses."
]

/** Raw bytes over the socket (the test client's `request` reads text). */
const fetchBytes = (path: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* Effect.promise(async () => {
      const response = await fetch(server.url + path)
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        bytes: new Uint8Array(await response.arrayBuffer())
      }
    })
  })

const postFile = (path: string, bytes: Uint8Array, as: "raw" | "chunked" | "multipart" = "raw") =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* Effect.promise(async () => {
      let init: RequestInit
      if (as === "raw") {
        init = { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bytes }
      } else if (as === "chunked") {
        // No declared length: the server gathers the chunks as they come (http/BodyBytes.ts).
        const pieces = [bytes.subarray(0, 1000), bytes.subarray(1000, 5000), bytes.subarray(5000)]
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const piece of pieces) controller.enqueue(piece)
            controller.close()
          }
        })
        init = {
          method: "POST",
          headers: { "content-type": "application/octet-stream" },
          body,
          duplex: "half"
        } as RequestInit
      } else {
        const form = new FormData()
        form.append("file", new Blob([bytes]), "bank.brain")
        init = { method: "POST", body: form }
      }
      const response = await fetch(server.url + path, init)
      const text = await response.text()
      return { status: response.status, text, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

const recall = (bankId: string, query: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `${bank(bankId)}/memories/recall`, {
      json: { query, budget: "low" }
    })
    assert.strictEqual(response.status, 200, response.text)
    return response.body.results.map((result: any) => result.text) as Array<string>
  })

const status = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("GET", `${bank(bankId)}/brain/status`)
    assert.strictEqual(response.status, 200, response.text)
    return response.body
  })

/** The file with its payload CRC (and header CRC) recomputed, so only the SHA-256 can notice a change. */
const resealCrc = (file: Uint8Array) => {
  const copy = file.slice()
  const view = new DataView(copy.buffer)
  view.setUint32(20, crc32(copy.subarray(32)), true)
  view.setUint32(24, crc32(copy.subarray(0, 24)), true)
  return copy
}

layer(app, { excludeTestServices: true, timeout: "3 minutes" })("brain runtime", (it) => {
  it.effect("export → validate → import round-trips byte for byte and installs without a rebuild", () =>
    Effect.gen(function*() {
      yield* retain("brain-a", facts)
      const exported = yield* fetchBytes(`${bank("brain-a")}/brain/export`)
      assert.strictEqual(exported.status, 200)
      assert.strictEqual(exported.type, "application/octet-stream")
      assert.deepStrictEqual([...exported.bytes.subarray(0, 8)], [0x89, 0x45, 0x42, 0x52, 0x4e, 0x0d, 0x0a, 0x1a])

      for (const as of ["raw", "chunked", "multipart"] as const) {
        const verdict = yield* postFile(`${bank("brain-a")}/brain/import/validate`, exported.bytes, as)
        assert.strictEqual(verdict.status, 200, verdict.text)
        assert.deepStrictEqual(verdict.body, { valid: true, version: 2, reason: null })
      }

      const before = yield* status("brain-a")
      const imported = yield* postFile(`${bank("brain-a")}/brain/import`, exported.bytes, "multipart")
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.installed, true, imported.text)
      assert.strictEqual(imported.body.format_version, "2")
      assert.strictEqual(imported.body.size_bytes, exported.bytes.length)
      // The file is named, never placed: the server's directories stay out of responses.
      assert.strictEqual(imported.body.file_path, "brain-a.brain")
      const dataDir = (yield* EngramConfig).dataDir
      assert.deepStrictEqual(
        new Uint8Array(readFileSync(join(dataDir, "brain", imported.body.file_path))),
        exported.bytes
      )

      // The installed brain answers the next recall: no build, no cold read.
      const found = yield* recall("brain-a", "telescope lens Porto")
      assert.include(found, facts[1])
      const after = yield* status("brain-a")
      assert.strictEqual(after.metrics.imports_installed, before.metrics.imports_installed + 1)
      assert.strictEqual(after.metrics.builds, before.metrics.builds)
      assert.strictEqual(after.metrics.cold_reads, before.metrics.cold_reads)
      assert.strictEqual(after.exists, true)
      assert.strictEqual(after.size_bytes, exported.bytes.length)
      assert.strictEqual(after.format_version, "2")
      assert.strictEqual(after.compatibility_reason, null)
      assert.strictEqual(after.source_snapshot_id, `${facts.length}.${after.source_snapshot_id.split(".")[1]}.0`)
      assert.strictEqual(after.native_library_loaded, false)
      assert.strictEqual(after.circuit_open, false)
      assert.isAbove(after.metrics.brain_bytes, 0)

      // Nothing changed: the same file comes back, byte for byte.
      const again = yield* fetchBytes(`${bank("brain-a")}/brain/export`)
      assert.deepStrictEqual(again.bytes, exported.bytes)

      // A write moves the data version: the old file is no longer installable as it is, and says why.
      yield* retain("brain-a", ["Dave painted the observatory dome blue."])
      const moved = yield* status("brain-a")
      assert.match(moved.compatibility_reason, /data version moved/)
      const stale = yield* postFile(`${bank("brain-a")}/brain/import`, exported.bytes)
      assert.strictEqual(stale.status, 200, stale.text)
      assert.strictEqual(stale.body.installed, false)
      assert.match(stale.body.install_reason, /data version moved/)
      assert.include(yield* recall("brain-a", "dome painted blue"), "Dave painted the observatory dome blue.")
    }))

  it.effect("every damaged file is refused with its precise reason; a bank mismatch is a 400", () =>
    Effect.gen(function*() {
      yield* retain("brain-b", facts)
      yield* retain("brain-other", ["Erin keeps bees."])
      const { bytes } = yield* fetchBytes(`${bank("brain-b")}/brain/export?mode=full_copy`)
      const validate = (file: Uint8Array, bankId = "brain-b") =>
        Effect.map(postFile(`${bank(bankId)}/brain/import/validate`, file), (response) => {
          assert.strictEqual(response.status, 200, response.text)
          return response.body as { valid: boolean; version: number | null; reason: string | null }
        })

      const badMagic = bytes.slice()
      badMagic[1] = 0x58
      const badVersion = bytes.slice()
      new DataView(badVersion.buffer).setUint16(8, 99, true)
      const badHeader = bytes.slice()
      badHeader[13] = badHeader[13]! ^ 0x01
      const flipped = bytes.slice()
      const middle = Math.floor(bytes.length / 2)
      flipped[middle] = flipped[middle]! ^ 0xff
      const cases: Array<[string, Uint8Array, RegExp, number | null]> = [
        ["too short", bytes.slice(0, 10), /too short/, null],
        ["bad magic", badMagic, /bad magic/, null],
        ["unsupported version", badVersion, /unsupported version 99/, 99],
        ["header checksum", badHeader, /header: checksum mismatch/, 2],
        ["truncated", bytes.slice(0, bytes.length - 100), /truncated/, 2],
        ["crc32 checksum", flipped, /checksum mismatch \(crc32\)/, 2],
        ["sha256 checksum", resealCrc(flipped), /checksum mismatch \(sha256\)/, 2],
        ["too large", new Uint8Array(maxFileBytes + 1), /too large/, null]
      ]
      for (const [name, file, reason, version] of cases) {
        const verdict = yield* validate(file)
        assert.strictEqual(verdict.valid, false, name)
        assert.match(verdict.reason ?? "", reason, name)
        assert.strictEqual(verdict.version, version, name)
        const refused = yield* postFile(`${bank("brain-b")}/brain/import`, file)
        assert.strictEqual(refused.status, 400, `${name}: ${refused.text}`)
        assert.match(refused.body.detail, reason, name)
      }

      const mismatch = yield* validate(bytes, "brain-other")
      assert.strictEqual(mismatch.valid, false)
      assert.match(mismatch.reason ?? "", /bank mismatch.*brain-b/)
      const refused = yield* postFile(`${bank("brain-other")}/brain/import`, bytes)
      assert.strictEqual(refused.status, 400, refused.text)
      assert.match(refused.body.detail, /bank mismatch/)
      assert.include(yield* recall("brain-other", "bees"), "Erin keeps bees.")

      const server = yield* TestServer
      const unknown = yield* server.request("GET", `${bank("no-such-bank")}/brain/status`)
      assert.strictEqual(unknown.status, 404)
    }))

  it.effect("a version-1 file stays readable and is imported without being installed", () =>
    Effect.gen(function*() {
      const fixture = new Uint8Array(readFileSync(join(import.meta.dirname, "../fixtures/brain/v1-tiny.brain")))
      yield* retain("legacy", ["Frank runs the legacy archive."])
      const verdict = yield* postFile(`${bank("legacy")}/brain/import/validate`, fixture)
      assert.deepStrictEqual(verdict.body, { valid: true, version: 1, reason: null })
      const imported = yield* postFile(`${bank("legacy")}/brain/import`, fixture)
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.format_version, "1")
      assert.strictEqual(imported.body.installed, false)
      assert.match(imported.body.install_reason, /version 1 file carries no keyword index/)
      const state = yield* status("legacy")
      assert.strictEqual(state.format_version, "1")
      assert.strictEqual(state.generated_at, "2026-01-02T03:04:05.000Z")
      assert.match(state.compatibility_reason, /version 1 file carries no data version/)
      assert.include(yield* recall("legacy", "legacy archive"), "Frank runs the legacy archive.")
    }))

  it.effect("the breaker opens after repeated build failures, half-opens after its cool-down, closes on success", () =>
    Effect.gen(function*() {
      yield* retain("breaker", facts)
      failing.add("breaker")
      // Recall answers from SQL while builds fail; each recall tries (and fails) one build until the breaker opens.
      for (let attempt = 1; attempt <= 3; attempt++) {
        assert.include(yield* recall("breaker", "star catalogue Carol"), facts[3])
        const state = yield* status("breaker")
        assert.strictEqual(state.failure_count, attempt)
        assert.strictEqual(state.circuit_state, attempt < 3 ? "closed" : "open")
        assert.strictEqual(state.circuit_open, attempt === 3)
        assert.strictEqual(state.enabled, attempt < 3)
      }
      // Open: no build is tried, recall still answers from SQL.
      assert.include(yield* recall("breaker", "telescope lens Porto"), facts[1])
      const open = yield* status("breaker")
      assert.strictEqual(open.metrics.build_failures, 3)
      assert.isAtLeast(open.metrics.sql_fallbacks, 4)
      assert.strictEqual(open.metrics.builds, 0)

      yield* Effect.sleep(Duration.millis(700))
      assert.strictEqual((yield* status("breaker")).circuit_state, "half_open")
      // A failed trial opens it again at once.
      yield* recall("breaker", "observatory")
      const reopened = yield* status("breaker")
      assert.strictEqual(reopened.circuit_state, "open")
      assert.strictEqual(reopened.failure_count, 4)

      yield* Effect.sleep(Duration.millis(700))
      failing.delete("breaker")
      assert.include(yield* recall("breaker", "star catalogue Carol"), facts[3])
      const closed = yield* status("breaker")
      assert.strictEqual(closed.circuit_state, "closed")
      assert.strictEqual(closed.circuit_open, false)
      assert.strictEqual(closed.failure_count, 0)
      assert.strictEqual(closed.metrics.builds, 1)
      assert.strictEqual(closed.enabled, true)
      assert.isNumber(closed.metrics.last_build_ms)
    }))

  it.effect("/version reports the brain features", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const version = yield* server.request("GET", "/version")
      assert.strictEqual(version.body.features.brain_runtime, true)
      assert.strictEqual(version.body.features.brain_import_export, true)
    }))
})

describe("brain settings", () => {
  layer(testApp({ brain: { ...defaultBrainSettings, enabled: false } }), { excludeTestServices: true })(
    "disabled",
    (it) => {
      it.effect("every brain route answers 404 naming SERVICE_API_BRAIN_ENABLED", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const version = yield* server.request("GET", "/version")
          assert.strictEqual(version.body.features.brain_runtime, false)
          assert.strictEqual(version.body.features.brain_import_export, false)
          yield* retain("off", ["Gina likes tea."])
          for (const [method, path] of [["GET", "status"], ["GET", "export"], ["POST", "learn"]] as const) {
            const response = yield* server.request(
              method,
              `${bank("off")}/brain/${path}`,
              method === "POST"
                ? { json: { remote_endpoint: "https://example.com", remote_bank_id: "x" } }
                : undefined
            )
            assert.strictEqual(response.status, 404, path)
            assert.match(response.body.detail, /SERVICE_API_BRAIN_ENABLED=false/)
          }
          // Recall does not depend on the brain routes.
          assert.include(yield* recall("off", "tea"), "Gina likes tea.")
        }))
    }
  )

  layer(testApp({ brain: { ...defaultBrainSettings, importExportEnabled: false } }), { excludeTestServices: true })(
    "import/export off",
    (it) => {
      it.effect("export, validate and import answer 404 naming SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const version = yield* server.request("GET", "/version")
          assert.strictEqual(version.body.features.brain_runtime, true)
          assert.strictEqual(version.body.features.brain_import_export, false)
          yield* retain("files-off", ["Hugo plays chess."])
          assert.strictEqual((yield* server.request("GET", `${bank("files-off")}/brain/status`)).status, 200)
          const exported = yield* server.request("GET", `${bank("files-off")}/brain/export`)
          assert.strictEqual(exported.status, 404)
          assert.match(exported.body.detail, /SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED=false/)
          const imported = yield* postFile(`${bank("files-off")}/brain/import`, new Uint8Array(40))
          assert.strictEqual(imported.status, 404)
          assert.match(imported.body.detail, /SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED=false/)
        }))
    }
  )
})

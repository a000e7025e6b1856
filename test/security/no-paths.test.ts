/**
 * Responses name files, never where the server keeps them: `brain/status` and `brain/import` answer the `.brain`
 * file's name only, and a `.brain` file that cannot be written is a 503 without the file system's words (which
 * carry the absolute path); the path goes to the log.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { bankPath, ok } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const facts = [
  "Ines keeps the spare keys of the boathouse in a blue tin.",
  "The boathouse roof was repaired in April by Tomasz."
]

const exportBytes = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* Effect.promise(async () => {
      const response = await fetch(`${server.url}${bankPath(bankId)}/brain/export`)
      return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) }
    })
  })

const importBytes = (bankId: string, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* Effect.promise(async () => {
      const response = await fetch(`${server.url}${bankPath(bankId)}/brain/import`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: bytes
      })
      const text = await response.text()
      return { status: response.status, text, body: JSON.parse(text) }
    })
  })

layer(testApp(), { excludeTestServices: true, timeout: "2 minutes" })("brain responses without server paths", (it) => {
  it.effect("brain/status and brain/import name the .brain file, not its absolute path", () =>
    Effect.gen(function*() {
      const { dataDir } = yield* EngramConfig
      const bankId = "no-paths"
      yield* ok("POST", `${bankPath(bankId)}/memories`, { items: facts.map((content) => ({ content })) })
      const exported = yield* exportBytes(bankId)
      assert.strictEqual(exported.status, 200)

      const status = yield* ok("GET", `${bankPath(bankId)}/brain/status`)
      assert.isTrue(status.body.exists, status.text)
      assert.strictEqual(status.body.file_path, "no-paths.brain")
      assert.notInclude(status.text, dataDir)

      const imported = yield* importBytes(bankId, exported.bytes)
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.file_path, "no-paths.brain")
      assert.notInclude(imported.text, dataDir)
    }))
})

// A brain directory that cannot exist: its parent is a regular file.
const blocker = join(mkdtempSync(join(tmpdir(), "engram-no-paths-")), "not-a-directory")
writeFileSync(blocker, "a file where the brain directory's parent should be")
const unwritable = testApp({ brain: { ...defaultBrainSettings, cacheDir: Option.some(join(blocker, "brain")) } })

layer(unwritable, { excludeTestServices: true, timeout: "2 minutes" })("an unwritable brain directory", (it) => {
  it.effect("is a 503 that does not name the directory", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "no-paths-503"
      yield* ok("POST", `${bankPath(bankId)}/memories`, { items: facts.map((content) => ({ content })) })
      const exported = yield* server.request("GET", `${bankPath(bankId)}/brain/export`)
      assert.strictEqual(exported.status, 503, exported.text)
      assert.match(exported.body.detail, /the \.brain file could not be written/)
      assert.notInclude(exported.text, blocker)
      assert.notInclude(exported.text, "ENOTDIR")
    }))
})

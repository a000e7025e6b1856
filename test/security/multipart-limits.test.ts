/**
 * Multipart bodies are capped while they are parsed: more parts than a route takes, a form field over 1 MiB, or a
 * file part over the route's own file cap answers 413 with JSON naming the field and the limit, and the handler
 * never runs (nothing is stored). A body within the limits is served as before.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { codebasesPath, upload } from "../support/CodebaseClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const app = testApp({ codebases: { ...defaultCodebaseSettings, parseWorkers: 1 } })

const post = (server: typeof TestServer.Service, path: string, form: FormData) =>
  Effect.promise(async () => {
    const response = await fetch(server.url + path, { method: "POST", body: form })
    return { status: response.status, body: await response.json() as any }
  })

const filesForm = (count: number, request?: string) => {
  const form = new FormData()
  for (let i = 0; i < count; i++) form.append("files", new Blob([`# Note ${i}\n`]), `note${i}.md`)
  if (request !== undefined) form.append("request", request)
  return form
}

layer(app, { excludeTestServices: true })("multipart limits", (it) => {
  it.effect("file retain with more than 64 parts, or a 1.5 MiB request field, answers 413 naming the field; nothing stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "multipart-parts"
      const path = `/v1/default/banks/${bankId}/files/retain`

      const tooMany = yield* post(server, path, filesForm(200))
      assert.strictEqual(tooMany.status, 413, JSON.stringify(tooMany.body))
      assert.strictEqual(
        tooMany.body.detail,
        "files: more than 64 parts in the multipart/form-data body; send at most 63 files per request"
      )
      assert.deepStrictEqual(tooMany.body.errors.map((issue: any) => issue.field), ["files"])

      const bigField = yield* post(server, path, filesForm(1, JSON.stringify({ context: "x".repeat(1536 * 1024) })))
      assert.strictEqual(bigField.status, 413, JSON.stringify(bigField.body))
      assert.strictEqual(bigField.body.detail, `request: a form field may hold at most ${1024 * 1024} bytes`)

      const operations = yield* server.request("GET", `/v1/default/banks/${bankId}/operations`)
      assert.strictEqual((operations.body?.operations ?? operations.body?.items ?? []).length, 0)

      const fine = yield* post(server, path, filesForm(63))
      assert.strictEqual(fine.status, 200, JSON.stringify(fine.body))
      assert.strictEqual(fine.body.files_count, 63)
    }))

  it.effect("a codebase file part over the route's file cap answers 413 naming the field, before the rest is read", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "multipart-file"
      const cap = defaultCodebaseSettings.archive.maxFileBytes
      const tooLarge = yield* upload(
        server,
        `${codebasesPath(bankId)}/import/file`,
        "file",
        "big.ts",
        "x".repeat(cap + 512 * 1024),
        { name: "big" }
      )
      assert.strictEqual(tooLarge.status, 413, tooLarge.text)
      assert.strictEqual(tooLarge.body.detail, `file: a file part may hold at most ${cap} bytes`)
      const listed = yield* server.request("GET", codebasesPath(bankId))
      assert.deepStrictEqual(listed.body.items, [])

      const parts = new FormData()
      parts.append("file", new Blob(["export const a = 1\n"]), "a.ts")
      for (let i = 0; i < 10; i++) parts.append("request", JSON.stringify({ name: `a${i}` }))
      const tooManyParts = yield* post(server, `${codebasesPath(bankId)}/import/file`, parts)
      assert.strictEqual(tooManyParts.status, 413, JSON.stringify(tooManyParts.body))
      assert.strictEqual(tooManyParts.body.detail, "body: more than 8 parts in the multipart/form-data body")
    }))
})

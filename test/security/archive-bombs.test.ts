/**
 * Archive and document bombs over HTTP, on the server's default caps: the 0.5 MB zip of 512 × 1 MiB of zeros (it
 * used to pass every cap and make the server inflate 512 MiB per request) is refused at its first entry; a zip
 * whose every entry stays under the ratio floor is stopped at its inflation budget; DOCX and XLSX files that are
 * bombs are refused in the request before any parser opens them. Each refusal is a 400 naming the field and the
 * reason, nothing is stored, and `/health` keeps answering while the bomb is being read. Real archives and
 * documents still import.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { docx } from "../fixtures/files/documents.ts"
import { codebasesPath, settled, upload } from "../support/CodebaseClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { makeZip } from "../support/ZipWriter.ts"
import { floorBomb, officeBomb, probingHealth, zerosBomb } from "../support/ArchiveBombs.ts"

const app = testApp({ codebases: { ...defaultCodebaseSettings, parseWorkers: 1 } })

const retainFiles = (
  server: typeof TestServer.Service,
  bankId: string,
  files: ReadonlyArray<{ name: string; bytes: Uint8Array }>
) =>
  Effect.promise(async () => {
    const form = new FormData()
    for (const file of files) form.append("files", new Blob([Buffer.from(file.bytes)]), file.name)
    const response = await fetch(`${server.url}/v1/default/banks/${bankId}/files/retain`, {
      method: "POST",
      body: form
    })
    return { status: response.status, body: await response.json() as any }
  })

/** Nothing of the bank exists: no codebase, no operation, no document. */
const assertNothingStored = (server: typeof TestServer.Service, bankId: string) =>
  Effect.gen(function*() {
    const codebases = yield* server.request("GET", codebasesPath(bankId))
    assert.deepStrictEqual(codebases.body?.items ?? [], [], "codebases")
    const operations = yield* server.request("GET", `/v1/default/banks/${bankId}/operations`)
    assert.strictEqual((operations.body?.operations ?? operations.body?.items ?? []).length, 0, "operations")
    const documents = yield* server.request("GET", `/v1/default/banks/${bankId}/documents`)
    assert.strictEqual((documents.body?.items ?? []).length, 0, "documents")
  })

layer(app, { excludeTestServices: true })("archive and document bombs", (it) => {
  it.effect("512 files of 1 MiB of zeros: refused with 400 at the first entry's ratio, nothing stored, /health answering", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "bomb-zeros"
      const bomb = zerosBomb()
      assert.isBelow(bomb.byteLength, 600_000, "the bomb is small on the wire")
      const probed = yield* probingHealth(
        server,
        upload(server, `${codebasesPath(bankId)}/import/zip`, "archive", "bomb.zip", bomb, { name: "bomb" })
      )
      const response = probed.result
      assert.strictEqual(response.status, 400, response.text)
      assert.match(
        response.body.detail,
        /^archive: archive refused \(compression_ratio\): entry 'bomb\/zeros0\.bin' inflates more than 100 times/
      )
      assert.deepStrictEqual(response.body.errors.map((issue: any) => issue.field), ["archive"])
      assert.isTrue(probed.statuses.every((status) => status === 200), `health statuses ${probed.statuses}`)
      yield* assertNothingStored(server, bankId)
    }))

  it.effect("entries each under the ratio floor: stopped at the archive's inflation budget, /health answering while it inflates", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "bomb-floor"
      const bomb = floorBomb()
      const probed = yield* probingHealth(
        server,
        upload(server, `${codebasesPath(bankId)}/import/zip`, "archive", "bomb.zip", bomb, { name: "bomb" })
      )
      const response = probed.result
      assert.strictEqual(response.status, 400, response.text)
      assert.include(response.body.detail, "archive refused (archive_ratio)")
      assert.include(response.body.detail, `at most 20 times its own ${bomb.byteLength} bytes`)
      // 64 MiB are inflated before the refusal; the event loop answers health checks meanwhile.
      assert.isAtLeast(
        probed.answeredInFlight,
        1,
        `health answered ${probed.statuses.length} times in ${probed.requestMs} ms`
      )
      assert.isTrue(probed.statuses.every((status) => status === 200), `health statuses ${probed.statuses}`)
      yield* assertNothingStored(server, bankId)
    }))

  it.effect("DOCX and XLSX bombs are refused in the request with 400 naming the file, before any parser, nothing stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "bomb-office"
      const block = new Uint8Array(64 * 1024)
      const cases: ReadonlyArray<readonly [string, Uint8Array, string]> = [
        [
          "report.docx",
          officeBomb("docx", [{ name: "word/media/zeros.bin", data: new Uint8Array(16 * 1024 * 1024) }]),
          "compression_ratio"
        ],
        [
          "sheet.xlsx",
          officeBomb("xlsx", [{ name: "xl/worksheets/sheet1.xml", data: new Uint8Array(8 * 1024 * 1024) }]),
          "compression_ratio"
        ],
        [
          "parts.docx",
          officeBomb("docx", Array.from({ length: 2048 }, (_, i) => ({ name: `word/parts/p${i}.xml`, data: block }))),
          "archive_ratio"
        ]
      ]
      for (const [name, bytes, reason] of cases) {
        const probed = yield* probingHealth(
          server,
          retainFiles(server, bankId, [{ name: "fine.md", bytes: new TextEncoder().encode("# Fine\n") }, {
            name,
            bytes
          }])
        )
        const response = probed.result
        assert.strictEqual(response.status, 400, `${name}: ${JSON.stringify(response.body)}`)
        assert.deepStrictEqual(response.body.errors.map((issue: any) => issue.field), ["files.1"], name)
        assert.include(response.body.detail, `refused before parsing (${reason})`, name)
        assert.isTrue(probed.statuses.every((status) => status === 200), `${name}: health statuses ${probed.statuses}`)
      }
      // The first, harmless file of each request was not stored either.
      yield* assertNothingStored(server, bankId)
    }))

  it.effect("a normal repository zip and a normal DOCX still import", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "bomb-normal"
      const repo = makeZip([
        { name: "app-main/src/main.ts", data: "export const main = () => console.log(\"hello\")\n".repeat(40) },
        { name: "app-main/src/util.ts", data: "export function add(a: number, b: number) { return a + b }\n" },
        // Text compressing well past 100× that is small: under the ratio floor, as any blank-heavy file.
        { name: "app-main/src/blank.ts", data: `${"\n".repeat(60_000)}export {}\n` },
        { name: "app-main/README.md", data: "# App\n\nA small app.\n" }
      ])
      const imported = yield* upload(server, `${codebasesPath(bankId)}/import/zip`, "archive", "app.zip", repo, {
        name: "app"
      })
      assert.strictEqual(imported.status, 200, imported.text)
      const operation = yield* settled(server, bankId, imported.body.operation_id)
      assert.strictEqual(operation.status, "completed", JSON.stringify(operation))
      const files = (yield* server.request("GET", `${codebasesPath(bankId)}/${imported.body.codebase_id}/files`)).body
      assert.includeMembers(files.items.map((file: any) => file.path), [
        "src/main.ts",
        "src/util.ts",
        "src/blank.ts",
        "README.md"
      ])

      const retained = yield* retainFiles(server, bankId, [{
        name: "briefing.docx",
        bytes: yield* Effect.promise(docx)
      }])
      assert.strictEqual(retained.status, 200, JSON.stringify(retained.body))
      const done = yield* settled(server, bankId, retained.body.operation_ids[0])
      assert.strictEqual(done.status, "completed", JSON.stringify(done))
      const document = yield* server.request("GET", `/v1/default/banks/${bankId}/documents/briefing.docx`)
      assert.strictEqual(document.status, 200, document.text)
      assert.isAbove(document.body.memory_unit_count, 0)
    }))
})

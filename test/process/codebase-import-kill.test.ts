/**
 * An accepted codebase import survives a crash: the request hands its checked files to the import task in
 * memory (so a normal import never reads the archive back), but the archive it stored is what a restarted
 * service parses. The service is killed with SIGKILL right after answering the import, before the parse ends.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { eventually } from "../support/Eventually.ts"
import { freshServiceEnv } from "../support/TestDatabase.ts"
import { makeZip } from "../support/ZipWriter.ts"

const tierEnv = () => freshServiceEnv({ SERVICE_API_ENABLE_OBSERVATIONS: "false" })

const json = (url: string, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`)
    return { status: response.status, body: await response.json() as any }
  })

const importZip = (url: string, bankId: string, name: string, bytes: Uint8Array) =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append("archive", new Blob([Buffer.from(bytes)]), `${name}.zip`)
    form.append("request", JSON.stringify({ name }))
    const response = await fetch(`${url}/v1/default/banks/${bankId}/codebases/import/zip`, {
      method: "POST",
      body: form
    })
    const body = await response.json() as any
    if (response.status !== 200) throw new Error(`import -> ${response.status}: ${JSON.stringify(body)}`)
    return body
  })

const settled = (url: string, bankId: string, operationId: string) =>
  eventually(
    json(url, `/v1/default/banks/${bankId}/operations/${operationId}`),
    (operation) => ["completed", "failed"].includes(operation.body.status),
    "90 seconds",
    { what: `operation ${operationId} settled`, interval: "100 millis" }
  ).pipe(Effect.map((operation) => operation.body))

/** Enough TypeScript modules that parsing them outlasts the moment of the kill. */
const modules = (count: number) =>
  makeZip(Array.from({ length: count }, (_, n) => ({
    name: `app/src/module${n}.ts`,
    data: `import { step${Math.max(0, n - 1)} } from "./module${Math.max(0, n - 1)}.ts"\n` +
      Array.from({ length: 8 }, (_, f) =>
        `export function step${n}_${f}(input: number): number {\n  let total = 0\n  for (let i = 0; i < input; i++) total += i % 3 === 0 ? step${
          Math.max(0, n - 1)
        }(i) : -i\n  return total\n}\n`).join("") +
      `export const step${n} = (x: number) => step${n}_0(x)\n`
  })))

describe("codebase import across a crash", () => {
  it.live(
    "SIGKILL right after the import is accepted: the restarted service builds it from the stored archive",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, first, restart } = yield* startService(tierEnv())

        const accepted = yield* importZip(url, "kill-cb", "app", modules(300))
        yield* killHard(first)

        yield* restart
        const operation = yield* settled(url, "kill-cb", accepted.operation_id)
        assert.strictEqual(operation.status, "completed", JSON.stringify(operation))
        const codebase = (yield* json(url, `/v1/default/banks/kill-cb/codebases/${accepted.codebase_id}`)).body
        assert.strictEqual(codebase.snapshot_status, "review_required")
        assert.strictEqual(codebase.current_snapshot_id, accepted.snapshot_id)
        assert.strictEqual(codebase.stats.indexed_files, 300)
        assert.strictEqual(codebase.stats.source_from, "stored_archive")
        const symbols =
          (yield* json(url, `/v1/default/banks/kill-cb/codebases/${accepted.codebase_id}/symbols?q=step299_7`)).body
        assert.strictEqual(symbols.items[0].fq_name, "step299_7")

        // Without a crash the task takes the request's files and never reads the archive back.
        const again = yield* importZip(url, "kill-cb", "small", modules(3))
        assert.strictEqual((yield* settled(url, "kill-cb", again.operation_id)).status, "completed")
        const small = (yield* json(url, `/v1/default/banks/kill-cb/codebases/${again.codebase_id}`)).body
        assert.strictEqual(small.stats.source_from, "request")
        assert.strictEqual(small.stats.indexed_files, 3)
      })),
    180_000
  )
})

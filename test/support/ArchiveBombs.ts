/**
 * Shared pieces of the archive-bomb tests: zips that are bombs (the 512 × 1 MiB of zeros that used to pass every
 * cap, and one whose entries each stay under the ratio floor), Office-looking bombs, and a probe that keeps asking
 * `/health` while a request is in flight.
 */
import { Clock, Effect, Fiber, Ref } from "effect"
import type { Response, TestServer } from "./TestServer.ts"
import { makeZip, type ZipEntry } from "./ZipWriter.ts"

/** 0.5 MB on the wire, 512 MiB inflated: each entry exactly at the old 1 MiB ratio floor. */
export const zerosBomb = () => {
  const mebibyte = new Uint8Array(1024 * 1024)
  return makeZip(Array.from({ length: 512 }, (_, i) => ({ name: `bomb/zeros${i}.bin`, data: mebibyte })))
}

/** 0.7 MB, 256 MiB inflated, every entry 64 KiB: no entry trips the ratio, only the archive's inflation budget. */
export const floorBomb = (count = 4096) => {
  const block = new Uint8Array(64 * 1024)
  return makeZip(Array.from({ length: count }, (_, i) => ({ name: `bomb/block${i}.bin`, data: block })))
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`

/** A zip that file-type detection takes for a DOCX (`word/document.xml`) or an XLSX (`xl/workbook.xml`), plus `parts`. */
export const officeBomb = (kind: "docx" | "xlsx", parts: ReadonlyArray<ZipEntry>) =>
  makeZip([
    { name: "[Content_Types].xml", data: contentTypes },
    kind === "docx"
      ? {
        name: "word/document.xml",
        data: "<w:document><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>"
      }
      : { name: "xl/workbook.xml", data: "<workbook><sheets><sheet name=\"S\" sheetId=\"1\"/></sheets></workbook>" },
    ...parts
  ])

export interface Probed<A> {
  readonly result: A
  /** /health answers that arrived while the request was still in flight. */
  readonly answeredInFlight: number
  readonly statuses: ReadonlyArray<number>
  readonly maxLatencyMs: number
  readonly requestMs: number
}

/** Runs `work` and asks `/health` one request after another until it settles. */
export const probingHealth = <A>(server: typeof TestServer.Service, work: Effect.Effect<A>) =>
  Effect.gen(function*() {
    const done = yield* Ref.make(false)
    const started = yield* Clock.currentTimeMillis
    const fiber = yield* work.pipe(
      Effect.ensuring(Ref.set(done, true)),
      Effect.forkChild({ startImmediately: true })
    )
    const statuses: Array<number> = []
    let answeredInFlight = 0
    let maxLatencyMs = 0
    while (!(yield* Ref.get(done))) {
      const sent = yield* Clock.currentTimeMillis
      const health: Response = yield* server.request("GET", "/health")
      maxLatencyMs = Math.max(maxLatencyMs, (yield* Clock.currentTimeMillis) - sent)
      statuses.push(health.status)
      if (health.status === 200 && !(yield* Ref.get(done))) answeredInFlight++
    }
    const result = yield* Fiber.join(fiber)
    const requestMs = (yield* Clock.currentTimeMillis) - started
    return { result, answeredInFlight, statuses, maxLatencyMs, requestMs } satisfies Probed<A>
  })

/**
 * Runs document conversion (PDF, Office, HTML) on a small pool of worker threads (`WorkerPool`), so the server's
 * event loop never waits on a parser: measured in-process, a 10,000-row XLSX held the loop for 1.3 s and a 50-page
 * PDF for 0.3 s. A worker whose document exceeds the time limit, exhausts its heap or crashes is ended and replaced;
 * only that file fails. With `workers: 0` conversion runs in-process (same code, same limits except memory).
 */
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { availableParallelism } from "node:os"
import { makeWorkerPool, type WorkerLost } from "../../workers/WorkerPool.ts"
import { type ParsedFile, ParserError } from "../FileParser.ts"
import type { FileType } from "../FileType.ts"
import { documentToMarkdown } from "../formats/DocumentMarkdown.ts"
import { siblingScript } from "../../workers/SiblingScript.ts"

export interface DocumentRequest {
  readonly type: FileType
  readonly bytes: Uint8Array
}

export type DocumentReply =
  | { readonly ok: true; readonly markdown: string; readonly pages?: number }
  | { readonly ok: false; readonly reason: "unsupported" | "failed"; readonly message: string }

export interface DocumentWorkerOptions {
  /** Worker threads; default one less than the CPUs (1 to 4); 0 converts in-process. */
  readonly workers?: number | undefined
  /** Time limit for one document; default 5 minutes. */
  readonly timeout?: Duration.Input | undefined
  /** Heap limit of one worker; default 1024 MB. */
  readonly memoryMb?: number | undefined
}

export interface DocumentConverter {
  readonly convert: (type: FileType, bytes: Uint8Array) => Effect.Effect<ParsedFile, ParserError>
}

export const defaultDocumentWorkers = () => Math.max(1, Math.min(4, availableParallelism() - 1))

/** The script each worker runs. */
const documentWorkerScript = siblingScript(import.meta.url, "documentWorker")

const fromReply = (reply: DocumentReply): Effect.Effect<ParsedFile, ParserError> =>
  reply.ok
    ? Effect.succeed(
      reply.pages === undefined ? { markdown: reply.markdown } : { markdown: reply.markdown, pages: reply.pages }
    )
    : Effect.fail(new ParserError({ reason: reply.reason, message: reply.message }))

const failureOf = (lost: WorkerLost) =>
  ParserError.failed(
    lost.reason === "start"
      ? `the document worker could not start: ${lost.detail}`
      : lost.reason === "timeout"
      ? `the conversion took longer than ${lost.detail}`
      : lost.reason === "out-of-memory"
      ? "the document needs more memory than a conversion may use"
      : lost.reason === "exited"
      ? `the document worker stopped (${lost.detail})`
      : `the document worker failed: ${lost.detail}`
  )

/**
 * `script` exists for tests only: they pass a worker that wraps `documentWorkerScript` and can hold a document
 * until it is ended, so the time limit is exceeded whatever the machine's speed. The server never passes one.
 */
export const makeDocumentWorkers = Effect.fnUntraced(function*(
  options: DocumentWorkerOptions = {},
  script: URL = documentWorkerScript
): Effect.fn.Return<DocumentConverter, never, Scope.Scope> {
  const size = options.workers ?? defaultDocumentWorkers()
  const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.minutes(5))
  const tooSlow = () => Effect.fail(ParserError.failed(`the conversion took longer than ${Duration.format(timeout)}`))

  if (size <= 0) {
    return {
      convert: (type, bytes) =>
        documentToMarkdown(type, bytes).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: tooSlow }))
    }
  }

  const pool = yield* makeWorkerPool<DocumentRequest, DocumentReply>({
    script,
    size,
    memoryMb: options.memoryMb ?? 1024,
    timeout
  })
  const convert = (type: FileType, bytes: Uint8Array) => {
    // The worker gets its own copy, transferred rather than cloned a second time.
    const copy = bytes.slice()
    return pool.run({ type, bytes: copy }, [copy.buffer]).pipe(Effect.mapError(failureOf), Effect.flatMap(fromReply))
  }
  return { convert }
})

/**
 * Runs document conversion (PDF, Office, HTML) on a small pool of worker threads, so the server's event loop never
 * waits on a parser: measured in-process, a 10,000-row XLSX held the loop for 1.3 s and a 50-page PDF for 0.3 s.
 * Workers start on first use, stop after a minute idle, run one document at a time under a heap limit, and a
 * worker whose document exceeds the time limit, exhausts its heap or crashes is ended and replaced; only that
 * file fails. With `workers: 0` conversion runs in-process (same code, same limits except memory).
 */
import { Duration, Effect, Pool } from "effect"
import type { Scope } from "effect"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { describeCause, type ParsedFile, ParserError } from "../FileParser.ts"
import type { FileType } from "../FileType.ts"
import { documentToMarkdown } from "../formats/DocumentMarkdown.ts"

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
const documentWorkerScript = new URL("./documentWorker.ts", import.meta.url)

/** Starts a worker and waits until it has loaded the parsers, so a conversion's time limit covers only its work. */
const spawn = (script: URL, memoryMb: number) =>
  Effect.acquireRelease(
    Effect.callback<Worker, ParserError>((resume) => {
      const worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: memoryMb } })
      // An `error` event nobody listens to would be rethrown in the main thread; jobs attach their own listeners.
      worker.on("error", () => undefined)
      const cleanup = () => {
        worker.off("message", onReady)
        worker.off("error", onError)
        worker.off("exit", onError)
      }
      const onReady = () => {
        cleanup()
        resume(Effect.succeed(worker))
      }
      const onError = (error: unknown) => {
        cleanup()
        void worker.terminate()
        resume(Effect.fail(ParserError.failed(`the document worker could not start: ${describeCause(error)}`)))
      }
      worker.once("message", onReady)
      worker.on("error", onError)
      worker.on("exit", onError)
      return Effect.promise(() => worker.terminate())
    }),
    (worker) => Effect.promise(() => worker.terminate())
  )

const fromReply = (reply: DocumentReply): Effect.Effect<ParsedFile, ParserError> =>
  reply.ok
    ? Effect.succeed(reply.pages === undefined ? { markdown: reply.markdown } : { markdown: reply.markdown, pages: reply.pages })
    : Effect.fail(new ParserError({ reason: reply.reason, message: reply.message }))

/**
 * Sends one document and waits for the worker's reply; fails only when the worker is lost (crash, heap limit,
 * exit). Interruption stops the wait; the caller then ends the worker.
 */
const run = (worker: Worker, request: DocumentRequest) =>
  Effect.callback<DocumentReply, ParserError>((resume) => {
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const onMessage = (reply: DocumentReply) => {
      cleanup()
      resume(Effect.succeed(reply))
    }
    const onError = (error: unknown) => {
      cleanup()
      const outOfMemory = (error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
      resume(Effect.fail(ParserError.failed(
        outOfMemory ? "the document needs more memory than a conversion may use" : `the document worker failed: ${describeCause(error)}`
      )))
    }
    const onExit = (code: number) => {
      cleanup()
      resume(Effect.fail(ParserError.failed(`the document worker stopped (exit code ${code})`)))
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    // The worker gets its own copy, transferred rather than cloned a second time.
    const bytes = request.bytes.slice()
    worker.postMessage({ type: request.type, bytes }, [bytes.buffer])
    return Effect.sync(cleanup)
  })

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
    return { convert: (type, bytes) => documentToMarkdown(type, bytes).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: tooSlow })) }
  }

  const pool = yield* Pool.makeWithTTL({
    acquire: spawn(script, options.memoryMb ?? 1024),
    min: 0,
    max: size,
    concurrency: 1,
    timeToLive: Duration.minutes(1),
    timeToLiveStrategy: "usage"
  })

  const convert = (type: FileType, bytes: Uint8Array) =>
    Effect.scoped(Effect.flatMap(Pool.get(pool), (worker) =>
      run(worker, { type, bytes }).pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: tooSlow }),
        // Without a reply the worker is dead, out of memory or still busy: end it; the pool starts a fresh one.
        Effect.onError(() => Pool.invalidate(pool, worker)),
        Effect.flatMap(fromReply)
      )))

  return { convert }
})

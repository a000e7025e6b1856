/**
 * Runs tree-sitter parsing on worker threads, so an import never holds the server's event loop: parsing a large
 * repository is seconds of CPU. The workers are a `WorkerPool` (started on first use, stopped after a minute idle, a
 * heap limit each); a batch that exceeds the time limit, the heap or crashes its worker fails (the worker is
 * replaced). With `workers: 0` parsing runs in-process.
 */
import { Data, Duration, Effect } from "effect"
import type { Scope } from "effect"
import { availableParallelism } from "node:os"
import { makeWorkerPool, type WorkerLost } from "../../workers/WorkerPool.ts"
import { type ParseOutcome, parseSources, type SourceFile } from "../parse/SourceParser.ts"
import { siblingScript } from "../../workers/SiblingScript.ts"

export class ParseFailure extends Data.TaggedError("ParseFailure")<{ readonly message: string }> {}

export interface CodeParser {
  /** Parses the files in batches spread over the workers; outcomes come back in the order of `files`. */
  readonly parse: (files: ReadonlyArray<SourceFile>) => Effect.Effect<Array<ParseOutcome>, ParseFailure>
  /** Starts the workers in the background (an import was just accepted), so its parse does not wait for them. */
  readonly warm: Effect.Effect<void>
}

export interface ParseWorkerOptions {
  readonly workers?: number | undefined
  /** Time limit of one batch; default 2 minutes. */
  readonly timeout?: Duration.Input | undefined
}

const script = siblingScript(import.meta.url, "parseWorker")
/** Files per message: large enough to amortise the message cost, small enough to spread over the workers. */
const batchSize = 64

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

const failureOf = (lost: WorkerLost) =>
  new ParseFailure({
    message: lost.reason === "start"
      ? `the parse worker could not start: ${lost.detail}`
      : lost.reason === "timeout"
      ? `a parse batch took longer than ${lost.detail}`
      : lost.reason === "out-of-memory"
      ? "a parse batch needs more memory than a parse worker may use"
      : `the parse worker stopped: ${lost.detail}`
  })

/**
 * One worker per core, up to four. Workers lower their own scheduling priority (`parseWorker.ts`), so on a busy
 * machine the event loop and the database thread still come first and parsing takes the cores they leave idle.
 */
export const defaultParseWorkers = () => Math.max(1, Math.min(4, availableParallelism()))

export const makeParseWorkers = Effect.fnUntraced(function*(
  options: ParseWorkerOptions = {}
): Effect.fn.Return<CodeParser, never, Scope.Scope> {
  const size = options.workers ?? defaultParseWorkers()
  const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.minutes(2))
  const batches = (files: ReadonlyArray<SourceFile>) =>
    Array.from(
      { length: Math.ceil(files.length / batchSize) },
      (_, index) => files.slice(index * batchSize, (index + 1) * batchSize)
    )

  if (size <= 0) {
    return {
      parse: (files) =>
        Effect.tryPromise({
          try: () => parseSources(files),
          catch: (error) => new ParseFailure({ message: describe(error) })
        }),
      warm: Effect.void
    }
  }
  const pool = yield* makeWorkerPool<ReadonlyArray<SourceFile>, Array<ParseOutcome>>({
    script,
    size,
    memoryMb: 1024,
    timeout
  })
  return {
    parse: (files) =>
      Effect.forEach(batches(files), (batch) => Effect.mapError(pool.run(batch), failureOf), { concurrency: size })
        .pipe(
          Effect.map((parts) => parts.flat())
        ),
    warm: pool.warm
  }
})

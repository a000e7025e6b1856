/**
 * Runs tree-sitter parsing on worker threads, so an import never holds the server's event loop: parsing a large
 * repository is seconds of CPU. Workers start on first use and stop after a minute idle; a batch that exceeds the
 * time limit or crashes its worker fails (the worker is replaced). With `workers: 0` parsing runs in-process.
 */
import { Data, Duration, Effect, Pool } from "effect"
import type { Scope } from "effect"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { type ParseOutcome, parseSources, type SourceFile } from "../parse/SourceParser.ts"

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

const script = new URL("./parseWorker.ts", import.meta.url)
/** Files per message: large enough to amortise the message cost, small enough to spread over the workers. */
const batchSize = 64

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

const spawn = Effect.acquireRelease(
  Effect.callback<Worker, ParseFailure>((resume) => {
    const worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: 1024 } })
    worker.on("error", () => undefined)
    const cleanup = () => {
      worker.off("message", onReady)
      worker.off("exit", onError)
    }
    const onReady = () => {
      cleanup()
      resume(Effect.succeed(worker))
    }
    const onError = (error: unknown) => {
      cleanup()
      void worker.terminate()
      resume(Effect.fail(new ParseFailure({ message: `the parse worker could not start: ${describe(error)}` })))
    }
    worker.once("message", onReady)
    worker.on("exit", onError)
    return Effect.promise(() => worker.terminate())
  }),
  (worker) => Effect.promise(() => worker.terminate())
)

const run = (worker: Worker, files: ReadonlyArray<SourceFile>) =>
  Effect.callback<Array<ParseOutcome>, ParseFailure>((resume) => {
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onError)
    }
    const onMessage = (reply: Array<ParseOutcome>) => {
      cleanup()
      resume(Effect.succeed(reply))
    }
    const onError = (error: unknown) => {
      cleanup()
      resume(Effect.fail(new ParseFailure({ message: `the parse worker stopped: ${describe(error)}` })))
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onError)
    worker.postMessage(files)
    return Effect.sync(cleanup)
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
  const tooSlow = () => Effect.fail(new ParseFailure({ message: `a parse batch took longer than ${Duration.format(timeout)}` }))
  const batches = (files: ReadonlyArray<SourceFile>) =>
    Array.from({ length: Math.ceil(files.length / batchSize) }, (_, index) => files.slice(index * batchSize, (index + 1) * batchSize))

  if (size <= 0) {
    return {
      parse: (files) =>
        Effect.tryPromise({ try: () => parseSources(files), catch: (error) => new ParseFailure({ message: describe(error) }) }),
      warm: Effect.void
    }
  }
  const scope = yield* Effect.scope
  const pool = yield* Pool.makeWithTTL({
    acquire: spawn,
    min: 0,
    max: size,
    concurrency: 1,
    timeToLive: Duration.minutes(1),
    timeToLiveStrategy: "usage"
  })
  const parseBatch = (files: ReadonlyArray<SourceFile>) =>
    Effect.scoped(Effect.flatMap(Pool.get(pool), (worker) =>
      run(worker, files).pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: tooSlow }),
        Effect.onError(() => Pool.invalidate(pool, worker))
      )))
  return {
    parse: (files) =>
      Effect.forEach(batches(files), parseBatch, { concurrency: size }).pipe(Effect.map((parts) => parts.flat())),
    // Taking every worker at once makes the pool start the missing ones; they go back idle (time to live 1 min).
    warm: Effect.forEach(Array.from({ length: size }), () => Effect.scoped(Pool.get(pool)), { concurrency: size, discard: true }).pipe(
      Effect.ignore,
      Effect.forkIn(scope),
      Effect.asVoid
    )
  }
})

/**
 * A pool of worker threads that each run one job at a time: code parsing (`codebases/workers/ParseWorkers`) and
 * document conversion (`files/workers/DocumentWorkers`) share it, so both start, limit and replace workers the same
 * way. Workers start on first use (the script posts one message once it is ready, so a job's time limit covers only
 * the job), stop after a minute idle, run under a heap limit, and a worker that exceeds the time limit, exhausts its
 * heap, crashes or exits is ended and replaced: only its job fails, with the reason.
 */
import { Data, Duration, Effect, Pool } from "effect"
import type { Scope } from "effect"
import { Worker } from "node:worker_threads"

/** Why a job got no reply. */
export class WorkerLost extends Data.TaggedError("WorkerLost")<{
  readonly reason: "start" | "out-of-memory" | "failed" | "exited" | "timeout"
  /** The thread's own words (error message, exit code) or the time limit, for the caller's message. */
  readonly detail: string
}> {}

export interface WorkerPoolOptions {
  /** The worker's entry point: it posts one message when ready, then answers each request with one message. */
  readonly script: URL
  readonly size: number
  /** Heap limit of one worker (its old generation), in MB. */
  readonly memoryMb: number
  /** Time limit of one job. */
  readonly timeout: Duration.Duration
}

export interface WorkerPool<Request, Reply> {
  /** Runs one job on a free worker; `transfer` lists buffers of `request` moved to the worker rather than copied. */
  readonly run: (request: Request, transfer?: ReadonlyArray<ArrayBuffer>) => Effect.Effect<Reply, WorkerLost>
  /** Starts every worker in the background, so the next jobs do not wait for them. */
  readonly warm: Effect.Effect<void>
}

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

const lostBy = (error: unknown) =>
  (error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
    ? new WorkerLost({ reason: "out-of-memory", detail: describe(error) })
    : new WorkerLost({ reason: "failed", detail: describe(error) })

/** Starts a worker and waits until it says it is ready. */
const spawn = (script: URL, memoryMb: number) =>
  Effect.acquireRelease(
    Effect.callback<Worker, WorkerLost>((resume) => {
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
        resume(
          Effect.fail(
            new WorkerLost({
              reason: "start",
              detail: typeof error === "number" ? `exit code ${error}` : describe(error)
            })
          )
        )
      }
      worker.once("message", onReady)
      worker.on("error", onError)
      worker.on("exit", onError)
      return Effect.promise(() => worker.terminate())
    }),
    (worker) => Effect.promise(() => worker.terminate())
  )

/** Sends one request and waits for the reply; fails only when the worker is lost. Interruption stops the wait. */
const send = <Reply>(worker: Worker, request: unknown, transfer: ReadonlyArray<ArrayBuffer>) =>
  Effect.callback<Reply, WorkerLost>((resume) => {
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const onMessage = (reply: Reply) => {
      cleanup()
      resume(Effect.succeed(reply))
    }
    const onError = (error: unknown) => {
      cleanup()
      resume(Effect.fail(lostBy(error)))
    }
    const onExit = (code: number) => {
      cleanup()
      resume(Effect.fail(new WorkerLost({ reason: "exited", detail: `exit code ${code}` })))
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    worker.postMessage(request, [...transfer])
    return Effect.sync(cleanup)
  })

export const makeWorkerPool = Effect.fnUntraced(function*<Request, Reply>(
  options: WorkerPoolOptions
): Effect.fn.Return<WorkerPool<Request, Reply>, never, Scope.Scope> {
  const scope = yield* Effect.scope
  const pool = yield* Pool.makeWithTTL({
    acquire: spawn(options.script, options.memoryMb),
    min: 0,
    max: options.size,
    concurrency: 1,
    timeToLive: Duration.minutes(1),
    timeToLiveStrategy: "usage"
  })
  const tooSlow = () => Effect.fail(new WorkerLost({ reason: "timeout", detail: Duration.format(options.timeout) }))
  return {
    run: (request, transfer = []) =>
      Effect.scoped(Effect.flatMap(Pool.get(pool), (worker) =>
        send<Reply>(worker, request, transfer).pipe(
          Effect.timeoutOrElse({ duration: options.timeout, orElse: tooSlow }),
          // Without a reply the worker is dead, out of memory or still busy: end it; the pool starts a fresh one.
          Effect.onError(() => Pool.invalidate(pool, worker))
        ))),
    // Taking every worker at once makes the pool start the missing ones; they go back idle (time to live 1 min).
    warm: Effect.forEach(Array.from({ length: options.size }), () => Effect.scoped(Pool.get(pool)), {
      concurrency: options.size,
      discard: true
    }).pipe(Effect.ignore, Effect.forkIn(scope), Effect.asVoid)
  }
})

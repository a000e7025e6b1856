/**
 * Builds a bank's HNSW index on a worker thread (`hnswBuildWorker.ts`), so the event loop spends nothing on it: at
 * 100k memories a build is about 45 s of a core, which ran on the event loop in 3–7 ms slices and held every other
 * bank's requests back by as much. Builds take turns on one worker at a time, at the lowest priority, leaving the
 * other core to the event loop and the database.
 *
 * Each build starts its own worker with the vectors in a buffer moved to it (no copy); the worker writes the index to
 * a scratch file, which the server reads back on libuv's thread pool (`HnswIndex.readFrom`): a native index cannot
 * cross threads. A worker is never terminated: stopped inside the native addon (a shutdown, a time limit) it aborts
 * the whole process (`napi_throw` fails while the thread terminates). A build that is given up raises a flag the
 * worker reads between points, and is waited for until it has returned.
 */
import { Data, Duration, Effect, Semaphore } from "effect"
import type { Scope } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { siblingScript } from "../../workers/SiblingScript.ts"
import type { IndexSnapshot } from "../records/MemoryRecords.ts"
import { HnswIndex } from "./HnswIndex.ts"

export class HnswBuildFailure extends Data.TaggedError("HnswBuildFailure")<{ readonly message: string }> {}

/** What the worker starts with: the vectors (`capacity` points fit the index; it grows past it) and where to write. */
export interface HnswBuildRequest {
  readonly dimensions: number
  readonly capacity: number
  readonly vectors: ArrayBuffer
  readonly path: string
  /** One Int32: set to 1 when the build is given up. */
  readonly cancel: SharedArrayBuffer
}

export type HnswBuildReply =
  | { readonly ok: true; readonly points: number }
  | { readonly ok: false; readonly message: string }

export interface HnswBuilder {
  /** The index of the snapshot's vectors, its points named by the snapshot's ids. The snapshot's buffer is moved. */
  readonly build: (snapshot: IndexSnapshot, dimensions: number) => Effect.Effect<HnswIndex, HnswBuildFailure>
}

const script = siblingScript(import.meta.url, "hnswBuildWorker")

/** One build; generous, since a million vectors take many minutes on a busy core. */
const buildTimeLimit = Duration.hours(2)

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

/** Runs one build on a worker of its own and waits for the worker to end, also when the build is given up. */
const runWorker = (request: HnswBuildRequest) =>
  Effect.callback<HnswBuildReply, HnswBuildFailure>((resume) => {
    const worker = new Worker(script, {
      workerData: request,
      transferList: [request.vectors],
      // The vectors and the index live outside the worker's JavaScript heap, and no label map is kept there.
      resourceLimits: { maxOldGenerationSizeMb: 64 }
    })
    let failure: string | undefined
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
    // The reply is the worker's last act: it ends by itself right after.
    worker.once("message", (reply: HnswBuildReply) => resume(Effect.succeed(reply)))
    worker.once("error", (error) => (failure = describe(error)))
    void exited.then(() =>
      resume(Effect.fail(new HnswBuildFailure({ message: `the index worker stopped: ${failure ?? "no reply"}` })))
    )
    return Effect.promise(() => {
      Atomics.store(new Int32Array(request.cancel), 0, 1)
      return exited
    })
  })

export const makeHnswBuilder = Effect.fnUntraced(function*(): Effect.fn.Return<HnswBuilder, never, Scope.Scope> {
  const turns = yield* Semaphore.make(1)
  const inScratchDirectory = <A, E>(use: (directory: string) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.tryPromise({
        try: () => mkdtemp(join(tmpdir(), "engram-hnsw-")),
        catch: (error) => new HnswBuildFailure({ message: `no scratch directory for the index: ${describe(error)}` })
      }),
      use,
      (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }).catch(() => undefined))
    )
  return {
    build: (snapshot, dimensions) =>
      inScratchDirectory((directory) =>
        Effect.gen(function*() {
          const path = join(directory, "index.hnsw")
          const request: HnswBuildRequest = {
            dimensions,
            capacity: Math.ceil(snapshot.ids.length * 1.25),
            vectors: snapshot.vectors.buffer as ArrayBuffer,
            path,
            cancel: new SharedArrayBuffer(4)
          }
          const reply = yield* turns.withPermit(runWorker(request)).pipe(
            Effect.timeoutOrElse({
              duration: buildTimeLimit,
              orElse: () =>
                Effect.fail(
                  new HnswBuildFailure({ message: `the build took longer than ${Duration.format(buildTimeLimit)}` })
                )
            })
          )
          if (!reply.ok) return yield* new HnswBuildFailure({ message: reply.message })
          return yield* Effect.tryPromise({
            try: () => HnswIndex.readFrom(path, dimensions, snapshot.ids),
            catch: (error) => new HnswBuildFailure({ message: `the built index could not be read: ${describe(error)}` })
          })
        })
      )
  }
})

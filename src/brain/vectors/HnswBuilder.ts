/**
 * Builds a bank's HNSW index on a worker thread (`hnswBuildWorker.ts`), so the event loop spends nothing on it: at
 * 100k memories a build is about 45 s of a core, which ran on the event loop in 3–7 ms slices and held every other
 * bank's requests back by as much (bench/isolation.ts phase 9, after a cold build). One worker, so builds of several
 * banks take turns and leave the other core to the event loop and the database; it runs at a lower priority.
 *
 * The worker gets the vectors in a buffer moved to it (no copy), writes the index to a file of its own, and the
 * server reads it back on libuv's thread pool (`HnswIndex.readFrom`): the native index cannot cross threads.
 */
import { Data, Duration, Effect } from "effect"
import type { Scope } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { siblingScript } from "../../workers/SiblingScript.ts"
import { makeWorkerPool } from "../../workers/WorkerPool.ts"
import type { IndexSnapshot } from "../records/MemoryRecords.ts"
import { HnswIndex } from "./HnswIndex.ts"

export class HnswBuildFailure extends Data.TaggedError("HnswBuildFailure")<{ readonly message: string }> {}

/** What the worker is sent: the vectors (`capacity` points fit the index; it grows past that). */
export interface HnswBuildRequest {
  readonly dimensions: number
  readonly capacity: number
  readonly vectors: ArrayBuffer
  readonly path: string
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

export const makeHnswBuilder = Effect.fnUntraced(function*(): Effect.fn.Return<HnswBuilder, never, Scope.Scope> {
  const pool = yield* makeWorkerPool<HnswBuildRequest, HnswBuildReply>({
    script,
    size: 1,
    // The vectors and the index are outside the worker's JavaScript heap.
    memoryMb: 64,
    timeout: buildTimeLimit
  })
  const inScratchDirectory = <A, E>(use: (directory: string) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.tryPromise({
        try: () => mkdtemp(join(tmpdir(), "engram-hnsw-")),
        catch: (error) => new HnswBuildFailure({ message: `no scratch directory for the index: ${String(error)}` })
      }),
      use,
      (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }).catch(() => undefined))
    )
  return {
    build: (snapshot, dimensions) =>
      inScratchDirectory((directory) =>
        Effect.gen(function*() {
          const path = join(directory, "index.hnsw")
          const { buffer } = snapshot.vectors
          const reply = yield* pool.run(
            { dimensions, capacity: Math.ceil(snapshot.ids.length * 1.25), vectors: buffer as ArrayBuffer, path },
            [buffer as ArrayBuffer]
          ).pipe(
            Effect.mapError((lost) => new HnswBuildFailure({ message: `the index worker stopped: ${lost.detail}` }))
          )
          if (!reply.ok) return yield* new HnswBuildFailure({ message: reply.message })
          return yield* Effect.tryPromise({
            try: () => HnswIndex.readFrom(path, dimensions, snapshot.ids),
            catch: (error) => new HnswBuildFailure({ message: `the built index could not be read: ${String(error)}` })
          })
        })
      )
  }
})

/**
 * Entry point of a vector-index worker thread (started by `HnswBuilder` for one build): builds an HNSW index from
 * the vectors it was handed into the file it was told (`HnswIndex.buildFile`: the server's degree, effort and seed,
 * its labels the vectors' positions) and answers with its size, then ends. Between points it reads the cancel flag,
 * so a given-up build ends within one point: the parent never terminates it.
 */
import { constants } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { lowerThreadPriority } from "../../workers/BackgroundPriority.ts"
import type { HnswBuildReply, HnswBuildRequest } from "./HnswBuilder.ts"
import { HnswIndex } from "./HnswIndex.ts"

// Lowest: a build is never urgent (searches scan meanwhile); nice 10 measured no different in bench/isolation.ts.
lowerThreadPriority(constants.priority.PRIORITY_LOW)

const build = async (request: HnswBuildRequest): Promise<HnswBuildReply> => {
  const cancelled = new Int32Array(request.cancel)
  const vectors = new Float32Array(request.vectors)
  try {
    const built = await HnswIndex.buildFile(
      request.path,
      request.dimensions,
      vectors,
      request.capacity,
      () => Atomics.load(cancelled, 0) === 1
    )
    return built
      ? { ok: true, points: vectors.length / request.dimensions }
      : { ok: false, message: "the build was given up" }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
}

void build(workerData as HnswBuildRequest).then((reply) => parentPort?.postMessage(reply))

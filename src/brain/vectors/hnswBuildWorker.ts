/**
 * Entry point of a vector-index worker thread (started by `HnswBuilder` for one build): builds an HNSW index from
 * the vectors it was handed, writes it to the file it was told and answers with its size, then ends. The index is
 * the same `HnswIndex` the server holds (same degree, effort and seed), its labels the vectors' positions. Between
 * points it reads the cancel flag, so a given-up build ends within one point: the parent never terminates it.
 */
import { constants } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { lowerThreadPriority } from "../../workers/BackgroundPriority.ts"
import type { HnswBuildReply, HnswBuildRequest } from "./HnswBuilder.ts"
import { HnswIndex } from "./HnswIndex.ts"

// Lowest: a build is never urgent (searches scan meanwhile); nice 10 measured no different in bench/isolation.ts.
lowerThreadPriority(constants.priority.PRIORITY_LOW)

const build = async (request: HnswBuildRequest): Promise<HnswBuildReply> => {
  const { capacity, dimensions, path } = request
  const cancelled = new Int32Array(request.cancel)
  const vectors = new Float32Array(request.vectors)
  const count = vectors.length / dimensions
  const index = new HnswIndex(dimensions, capacity)
  try {
    for (let label = 0; label < count; label++) {
      if (Atomics.load(cancelled, 0) === 1) return { ok: false, message: "the build was given up" }
      index.add(String(label), vectors.subarray(label * dimensions, (label + 1) * dimensions))
    }
    await index.writeTo(path)
    return { ok: true, points: count }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  } finally {
    index.release()
  }
}

void build(workerData as HnswBuildRequest).then((reply) => parentPort?.postMessage(reply))

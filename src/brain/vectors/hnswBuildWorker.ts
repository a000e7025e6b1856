/**
 * Entry point of the vector-index worker thread (spawned by `HnswBuilder`): builds one HNSW index per message from
 * the vectors it is handed, writes it to the file the message names and answers with its size. The index is the
 * same `HnswIndex` the server holds (same degree, effort and seed), its labels the vectors' positions. At 100k
 * memories a build is about 45 s of a core, which used to run on the event loop in 3–7 ms slices.
 */
import { constants } from "node:os"
import { parentPort } from "node:worker_threads"
import { lowerThreadPriority } from "../../workers/BackgroundPriority.ts"
import type { HnswBuildReply, HnswBuildRequest } from "./HnswBuilder.ts"
import { HnswIndex } from "./HnswIndex.ts"

// Lowest: a build is never urgent (searches scan meanwhile); nice 10 measured no different in bench/isolation.ts.
lowerThreadPriority(constants.priority.PRIORITY_LOW)

const build = async (request: HnswBuildRequest): Promise<HnswBuildReply> => {
  const { capacity, dimensions, path } = request
  const vectors = new Float32Array(request.vectors)
  const count = vectors.length / dimensions
  const index = new HnswIndex(dimensions, capacity)
  try {
    for (let label = 0; label < count; label++) {
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

parentPort?.on("message", (request: HnswBuildRequest) => {
  void build(request).then((reply) => parentPort?.postMessage(reply))
})

parentPort?.postMessage("ready")

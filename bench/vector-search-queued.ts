/**
 * What one nearest-neighbour search of a brain costs while a write's points wait in its HNSW index's queue (a
 * 100-item retain adds 16 points at once and queues 84; a bank being written to nearly always has some queued): the
 * index's candidates with the queued vectors scanned beside them, through the index's filter (a tag scope) and
 * without it (a scope taking every memory), against the exact scan every such search did before stop 70. The
 * index itself is complete apart from the queue. Clustered synthetic vectors, as the brain's tests use; median of
 * 200 queries of depth 10 (what a retain's neighbour search asks). Measurement only.
 *
 *   node bench/vector-search-queued.ts [sizes=4000,20000,100000] [dimensions=100]
 */
import { loadavg } from "node:os"
import { MemoryRecords } from "../src/brain/records/MemoryRecords.ts"
import { clusteredVectors } from "../test/support/ClusteredVectors.ts"
import { plainMemory } from "../test/support/MemoryInputs.ts"

const sizes = (process.argv[2] ?? "4000,20000,100000").split(",").map(Number)
const dimensions = Number(process.argv[3] ?? 100)
const queued = 84
const depth = 10

const median = (times: Array<number>) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!

console.log(`load average ${loadavg()[0]!.toFixed(1)}; ${queued} points queued; depth ${depth}`)
console.log(`\n| memories | exact scan, ms | index + queue, filtered, ms | index + queue, no filter, ms |`)
console.log(`|---:|---:|---:|---:|`)
for (const size of sizes) {
  const vectors = clusteredVectors(size + queued + 16, 3, { dimensions, centres: 60 })
  const records = new MemoryRecords(dimensions, size)
  records.upsert(vectors.slice(0, size).map((vector, n) => plainMemory(n, vector)))
  records.startIndex()
  while (!records.indexStep(10_000)) { /* filled at once: only the search is measured */ }
  records.upsert(vectors.slice(size).map((vector, n) => plainMemory(size + n, vector)))
  if (records.indexQueued !== queued) throw new Error(`expected ${queued} queued points, found ${records.indexQueued}`)
  const queries = clusteredVectors(200, 3, { dimensions, centres: 60 }).map((q) => q.map((x) => x + 0.01))
  const timed = (search: (query: Float32Array) => unknown) => {
    for (const query of queries.slice(0, 20)) search(query)
    return median(queries.map((query) => {
      const started = performance.now()
      search(query)
      return performance.now() - started
    })).toFixed(3)
  }
  const exact = timed((query) => records.nearest(query, { types: ["world"] }, depth, { exact: true }))
  const filtered = timed((query) => records.nearest(query, { types: ["world"], tags: () => true }, depth))
  const unfiltered = timed((query) => records.nearest(query, { types: ["world"] }, depth))
  console.log(`| ${size} | ${exact} | ${filtered} | ${unfiltered} |`)
}

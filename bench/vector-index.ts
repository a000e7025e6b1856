/**
 * What a big bank's vectors cost the event loop before its HNSW index is in, and while it is built: an exact scan of
 * every vector (what each search does until the index is complete), measured against a bare dot-product loop over
 * the same buffer in the same run; then the index built on the index worker (`HnswBuilder`) while a timer measures
 * how long the event loop is held, against the same build filled on the event loop 16 vectors a slice (what the
 * worker replaced, and what `SERVICE_API_BRAIN_INDEX_WORKER=false` still does). Clustered synthetic vectors, as the
 * brain's tests use. Measurement only.
 *
 *   node bench/vector-index.ts [vectors=100000] [dimensions=100]
 */
import { Effect } from "effect"
import { loadavg } from "node:os"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { setImmediate } from "node:timers/promises"
import { MemoryRecords } from "../src/brain/records/MemoryRecords.ts"
import { runSliced } from "../src/brain/Sliced.ts"
import { makeHnswBuilder } from "../src/brain/vectors/HnswBuilder.ts"
import { clusteredVectors } from "../test/support/ClusteredVectors.ts"
import { plainMemory } from "../test/support/MemoryInputs.ts"

const count = Number(process.argv[2] ?? 100_000)
const dimensions = Number(process.argv[3] ?? 100)
const everything = { types: ["world"], tags: () => true }

const median = (times: Array<number>) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!

const vectors = clusteredVectors(count, 7, { dimensions, centres: 200 })
const queries = clusteredVectors(50, 8, { dimensions, centres: 200 })
const records = new MemoryRecords(dimensions, count)
records.upsert(vectors.map((vector, n) => plainMemory(n, vector)))

/** The floor: one running sum over the whole buffer, nothing else per vector. */
const flat = new Float32Array(count * dimensions)
vectors.forEach((vector, n) => flat.set(vector, n * dimensions))
const bareScan = (query: Float32Array) => {
  let best = -Infinity
  for (let n = 0, at = 0; n < count; n++) {
    let dot = 0
    for (let i = 0; i < dimensions; i++, at++) dot += query[i]! * flat[at]!
    if (dot > best) best = dot
  }
  return best
}

const timed = (run: (query: Float32Array) => unknown) => {
  for (const query of queries.slice(0, 5)) run(query)
  return median(queries.map((query) => {
    const started = performance.now()
    run(query)
    return performance.now() - started
  }))
}

/** Runs `work` while a histogram records how late the event loop's turns come. */
const loopHeldWhile = async <A>(work: () => Promise<A>) => {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const started = performance.now()
  const utilization = performance.eventLoopUtilization()
  const result = await work()
  const seconds = (performance.now() - started) / 1000
  const busySeconds = performance.eventLoopUtilization(utilization).active / 1000
  delay.disable()
  return { result, seconds, busySeconds, maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 }
}

const bare = timed(bareScan)
const scan = timed((query) => records.nearest(query, everything, 60, { exact: true }))
console.log(`${count} vectors of ${dimensions} dimensions, load average ${loadavg()[0]!.toFixed(1)}`)
console.log(`\n| | ms (median of ${queries.length}) | / bare loop |\n|---|---:|---:|`)
console.log(`| bare dot-product loop | ${bare.toFixed(2)} | 1.00 |`)
console.log(`| exact scan, top 60 (\`VectorStore.exactTop\`) | ${scan.toFixed(2)} | ${(scan / bare).toFixed(2)} |`)

const onWorker = await loopHeldWhile(() =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const builder = yield* makeHnswBuilder()
    // Copied in steps with a turn of the event loop between them, as `BankBrains` does.
    const snapshot = yield* runSliced(records.indexSnapshot(), Effect.promise(() => setImmediate()))
    return yield* builder.build(snapshot, dimensions)
  })))
)
const inline = new MemoryRecords(dimensions, count)
inline.upsert(vectors.map((vector, n) => plainMemory(n, vector)))
const onLoop = await loopHeldWhile(async () => {
  inline.startIndex()
  while (!inline.indexStep(16)) await setImmediate()
})
const searched = timed((query) => inline.nearest(query, everything, 60))
console.log(
  `\n| index build | wall s | event loop busy s | event loop delay p99 ms | max ms |\n|---|---:|---:|---:|---:|`
)
for (const [name, run] of [["on the index worker", onWorker], ["on the event loop, 16 a slice", onLoop]] as const) {
  console.log(
    `| ${name} | ${run.seconds.toFixed(1)} | ${run.busySeconds.toFixed(2)} | ${run.p99Ms.toFixed(1)} | ${
      run.maxMs.toFixed(1)
    } |`
  )
}
console.log(`\nA search through the complete index, top 60: ${searched.toFixed(2)} ms (median)`)
onWorker.result.release()

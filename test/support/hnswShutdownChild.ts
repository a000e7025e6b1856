/**
 * Run as a child process by `HnswBuilder.test.ts`: starts eight index builds of 40k vectors and shuts their builder
 * down while each is under way (0.4 to 2.5 s in), as a server's shutdown does; prints "survived" and exits 0 when the
 * process outlived them all. A worker terminated inside hnswlib-node's native code aborts the whole process (`FATAL
 * ERROR: Error::ThrowAsJavaScriptException napi_throw`): with the pool that terminated it, three runs of three crashed.
 */
import { Effect } from "effect"
import { MemoryRecords } from "../../src/brain/records/MemoryRecords.ts"
import { runWhole } from "../../src/brain/Sliced.ts"
import { makeHnswBuilder } from "../../src/brain/vectors/HnswBuilder.ts"
import { clusteredVectors } from "./ClusteredVectors.ts"
import { plainMemory } from "./MemoryInputs.ts"

const dimensions = 100
const vectors = clusteredVectors(40_000, 14, { dimensions, centres: 40 })
const records = new MemoryRecords(dimensions)
records.upsert(vectors.map((vector, n) => plainMemory(n, vector)))

for (const millis of [400, 700, 1_000, 1_300, 1_600, 1_900, 2_200, 2_500]) {
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const builder = yield* makeHnswBuilder()
    yield* Effect.forkScoped(builder.build(runWhole(records.indexSnapshot()), dimensions))
    yield* Effect.sleep(millis)
  })))
}
process.stdout.write("survived\n")

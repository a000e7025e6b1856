/**
 * A big bank's HNSW index is complete under sustained reads, with a request always in flight (never a lull) and the
 * longest background wait an hour. By default it is built on the index worker: the event loop adds no point of it
 * (every read meanwhile scans exactly). Without the worker (`SERVICE_API_BRAIN_INDEX_WORKER=false`, and its fallback)
 * each read of the bank lets one slice of 16 vectors run, so the index is complete after about one read per 16
 * vectors; waiting for lulls alone, it filled 16 vectors per hour here (per `backgroundMaxWait`, half a second by
 * default) and every read meanwhile scanned every vector.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { Foreground } from "../../src/bank/Foreground.ts"
import { BankBrains } from "../../src/brain/BankBrains.ts"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { Llm } from "../../src/models/Llm.ts"
import { trigramEmbeddings } from "../support/FakeModels.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const names = ["Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiro", "Ines", "Jonas"]
const verbs = ["painted", "repaired", "sold", "borrowed", "photographed", "cleaned", "measured", "carried"]
const things = ["a violin", "the tractor", "an umbrella", "the telescope", "a kayak", "the piano", "a lantern"]
const places = ["in Lisbon", "near the harbour", "at the library", "in the garden", "on the mountain", "at school"]

/** 2,688 distinct sentences: with 128-dimension vectors, past the 250,000 floats an exact scan is kept for. */
const sentences = names.flatMap((name) =>
  verbs.flatMap((verb) => things.flatMap((thing) => places.map((place) => `${name} ${verb} ${thing} ${place}.`)))
)

const models = Layer.mergeAll(trigramEmbeddings(128), Llm.layerNone)

/** Retains the sentences, then reads the bank with a request always in flight until its index is ready. */
const readUntilIndexed = Effect.gen(function*() {
  const server = yield* TestServer
  const bank = "index-under-load"
  for (let from = 0; from < sentences.length; from += 500) {
    const items = sentences.slice(from, from + 500).map((content) => ({ content }))
    const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, { json: { items } })
    assert.strictEqual(retained.status, 200, retained.text)
  }
  const brains = yield* BankBrains
  const foreground = yield* Foreground
  // A request that never ends: from here on the server is never without one in flight.
  yield* Effect.forkScoped(foreground.request(Effect.never))
  const memories = (yield* brains.available(bank)).pipe(Option.getOrThrow).records.size
  assert.isAtLeast(memories, 2_600, "enough memories for an index")
  assert.strictEqual((yield* brains.state(bank)).vectorIndex, "building")
  let reads = 1
  while ((yield* brains.state(bank)).vectorIndex !== "ready" && reads < 20_000) {
    yield* brains.available(bank)
    reads++
    yield* Effect.sleep("2 millis")
  }
  const state = yield* brains.state(bank)
  assert.strictEqual(state.vectorIndex, "ready", `after ${reads} reads`)
  return { memories, reads, stats: state.stats }
})

const sustained = { backgroundMaxWait: Duration.hours(1) }

layer(testApp(sustained, undefined, models), { excludeTestServices: true, timeout: "5 minutes" })(
  "the vector index under sustained reads, built on its worker",
  (it) => {
    it.effect("is complete without a point added on the event loop", () =>
      Effect.gen(function*() {
        const { stats } = yield* readUntilIndexed
        assert.strictEqual(stats.indexBuilds, 1)
        assert.strictEqual(stats.indexWorkerBuilds, 1)
        assert.strictEqual(stats.indexPointsAddedInline, 0)
      }))
  }
)

layer(
  testApp({ ...sustained, brain: { ...defaultBrainSettings, indexWorker: false } }, undefined, models),
  { excludeTestServices: true, timeout: "5 minutes" }
)(
  "the vector index under sustained reads, without the worker",
  (it) => {
    it.effect("fills with the bank's reads when no lull ever comes", () =>
      Effect.gen(function*() {
        const { memories, reads, stats } = yield* readUntilIndexed
        assert.strictEqual(stats.indexWorkerBuilds, 0)
        assert.strictEqual(stats.indexPointsAddedInline, memories)
        // One slice of 16 vectors per read, and a few reads that came while a slice ran.
        assert.isAtMost(reads, Math.ceil((2 * memories) / 16))
      }))
  }
)

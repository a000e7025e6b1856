/**
 * The ONNX cross-encoder over the stand-in MiniLM-L6 reranker (real architecture and tokenizer, random
 * weights) in `../shared/models`, offline: loading, one probability per pair in input order across batches,
 * and a clear error for a model that is not there. Random weights say nothing about quality.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer } from "effect"
import * as Path from "node:path"
import { onnx } from "../../../../layers/models/RerankerLive.ts"
import { relevance } from "../../../../layers/models/rerank/OnnxReranker.ts"
import { Reranker } from "../../../../src/models/Reranker.ts"

const modelsDir = Path.resolve("../shared/models")
const standIn = "standin-random-crossencoder-minilm-l6"

const texts = [
  "Caroline researched adoption agencies for months before deciding.",
  "The weather was cold.",
  "Melanie painted a sunrise over the lake, which she later gave to her friend as a birthday present.",
  "Jon opened a dance studio.",
  "",
  "Gina started an online clothing store after losing her job at the bank.",
  "Dogs."
]

describe("relevance", () => {
  it("turns one logit into a logistic probability and several into the last label's softmax", () => {
    assert.deepStrictEqual(relevance(new Float32Array([0, 100, -100]), 3).map((p) => Number(p.toFixed(3))), [0.5, 1, 0])
    const [first, second] = relevance(new Float32Array([0, 0, 2, 0]), 2)
    assert.closeTo(first!, 0.5, 1e-9)
    assert.closeTo(second!, 1 / (1 + Math.exp(2)), 1e-9)
  })
})

layer(onnx({ model: standIn, modelsDir, batchSize: 3, maxCandidates: 5, timeout: "2 seconds" }), { timeout: 120_000 })(
  "OnnxReranker",
  (it) => {
    it.effect("scores every pair in input order across batches, each in [0, 1], the same as alone", () =>
      Effect.gen(function*() {
        const reranker = yield* Reranker
        assert.deepStrictEqual(reranker.identity, { provider: "onnx", model: standIn })
        assert.strictEqual(reranker.maxCandidates, 5)
        assert.strictEqual(Duration.toMillis(reranker.timeout), 2000)
        const scores = yield* reranker.score("What did Caroline research?", texts)
        assert.strictEqual(scores.length, texts.length)
        for (const [i, text] of texts.entries()) {
          assert.isTrue(scores[i]! >= 0 && scores[i]! <= 1, `score ${scores[i]}`)
          const [alone] = yield* reranker.score("What did Caroline research?", [text])
          // Padding changes int8 activation scales slightly, so "the same" means nearly identical.
          assert.closeTo(alone!, scores[i]!, 0.02, `text ${i} kept its place`)
        }
        assert.deepStrictEqual(yield* reranker.score("What did Caroline research?", texts), scores)
        assert.deepStrictEqual(yield* reranker.score("anything", []), [])
      }))
  }
)

describe("OnnxReranker loading", () => {
  it.effect("a model that is not in the models directory is a clear error, without reaching the network", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(onnx({ model: "no-such-reranker", modelsDir }))))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "cannot load reranker no-such-reranker")
    }))
})

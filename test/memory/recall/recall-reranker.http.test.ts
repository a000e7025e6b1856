/**
 * Recall with a cross-encoder configured, over HTTP: the stand-in ONNX reranker (random weights, real
 * inference) reads at most its candidate cap and the trace says so; a reranker that is too slow or fails
 * leaves the deterministic order in place and recall still answers.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as Path from "node:path"
import { onnx } from "../../../layers/models/RerankerLive.ts"
import type { Embeddings } from "../../../src/models/Embeddings.ts"
import type { Llm } from "../../../src/models/Llm.ts"
import { Reranker, RerankError } from "../../../src/models/Reranker.ts"
import { OfflineTestModels } from "../../support/FakeModels.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const facts = [
  "Caroline researched adoption agencies for months.",
  "Caroline went to an LGBTQ support group meeting.",
  "Melanie painted a sunrise over the lake.",
  "Melanie and Caroline talked about adoption over coffee.",
  "Jon opened a dance studio in the city.",
  "Gina started an online clothing store.",
  "Caroline wants to become a counselor.",
  "The support group meets every Tuesday."
]

const withReranker = (reranker: Layer.Layer<Reranker, unknown>) =>
  testApp({}, undefined, Layer.mergeAll(OfflineTestModels, reranker) as unknown as Layer.Layer<Embeddings | Llm>)

const recallTraced = (bank: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
      json: { items: facts.map((content) => ({ content })) }
    })
    assert.strictEqual(retained.status, 200, retained.text)
    const response = yield* server.request("POST", `/v1/default/banks/${bank}/memories/recall`, {
      json: { query: "What did Caroline research about adoption?", trace: true }
    })
    assert.strictEqual(response.status, 200, response.text)
    return response.body
  })

const standIn = onnx({
  model: "standin-random-crossencoder-minilm-l6",
  modelsDir: Path.resolve("../shared/models"),
  maxCandidates: 4,
  timeout: "10 seconds"
})

layer(withReranker(standIn), { excludeTestServices: true, timeout: 120_000 })(
  "recall with the ONNX cross-encoder",
  (it) => {
    it.effect("reranks at most the candidate cap and reports it in the trace", () =>
      Effect.gen(function*() {
        const body = yield* recallTraced("reranked")
        assert.strictEqual(body.trace.reranker.outcome, "reranked")
        assert.strictEqual(body.trace.reranker.model, "standin-random-crossencoder-minilm-l6")
        assert.strictEqual(body.trace.reranker.candidates, 4)
        assert.isAbove(body.results.length, 4)
        const scores: Array<number> = body.results.map((r: { score: number }) => r.score)
        assert.deepStrictEqual(scores, [...scores].sort((a, b) => b - a))
      }))
  }
)

const failing = Layer.succeed(Reranker)(Reranker.of({
  identity: { provider: "test", model: "always-fails" },
  maxCandidates: 8,
  timeout: Duration.seconds(5),
  score: () => Effect.fail(new RerankError({ message: "model crashed" }))
}))

layer(withReranker(failing), { excludeTestServices: true })("recall with a failing cross-encoder", (it) => {
  it.effect("keeps the deterministic order and says why", () =>
    Effect.gen(function*() {
      const body = yield* recallTraced("failing")
      assert.strictEqual(body.trace.reranker.outcome, "failed")
      assert.include(body.trace.reranker.error, "model crashed")
      assert.include(body.results[0].text, "adoption")
    }))
})

const slow = Layer.succeed(Reranker)(Reranker.of({
  identity: { provider: "test", model: "too-slow" },
  maxCandidates: 8,
  timeout: Duration.millis(50),
  // Never answers: only the reranker's timeout can let the recall answer, however slow the machine.
  score: () => Effect.never
}))

layer(withReranker(slow), { excludeTestServices: true })("recall with a slow cross-encoder", (it) => {
  it.effect("answers within the reranker's timeout with the deterministic order", () =>
    Effect.gen(function*() {
      const body = yield* recallTraced("slow")
      assert.strictEqual(body.trace.reranker.outcome, "timed_out")
      assert.include(body.results[0].text, "adoption")
    }))
})

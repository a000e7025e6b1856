/**
 * The OpenAI-compatible embedder over real HTTP on loopback: the scripted server answers deterministic vectors,
 * and a flaky proxy in front of it injects the failures (5xx, dropped connections, silence, 401).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { openai } from "../../../../layers/models/embeddings/EmbeddingsLive.ts"
import type { OpenAiOptions } from "../../../../layers/models/embeddings/OpenAiEmbedder.ts"
import { Embeddings } from "../../../../src/models/Embeddings.ts"
import { fakeEmbedding, scriptedOpenAi } from "../../../support/ScriptedOpenAi.ts"
import { flakyUpstream } from "./FlakyUpstream.ts"

const KEY = "sk-test-4f9a1c0ffee-secret"

/** Builds the embedder for the rest of the test's scope. */
const embedder = (options: Partial<OpenAiOptions> & { readonly baseUrl: string }) =>
  Layer.build(
    openai({ model: "text-embedding-test", apiKey: Redacted.make(KEY), retryBase: "10 millis", ...options }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
  ).pipe(Effect.map((context) => Context.get(context, Embeddings)))

const embeddingRequests = (
  server: { readonly requests: ReadonlyArray<{ readonly path: string; readonly body: any; readonly headers: any }> }
) => server.requests.filter((request) => request.path.endsWith("/embeddings"))

describe("OpenAiEmbedder", () => {
  it.live("discovers the dimension once, then embeds in order with the key as a Bearer token", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const embeddings = yield* embedder({ baseUrl: server.baseUrl, batchSize: 3 })
      assert.deepStrictEqual(embeddings.identity, { provider: "openai", model: "text-embedding-test", dimensions: 16 })
      const texts = ["alpha", "bravo charlie", "delta", "echo foxtrot golf", "hotel", "india juliet", "kilo"]
      const vectors = yield* embeddings.embedDocuments(texts)
      vectors.forEach((vector, i) => {
        fakeEmbedding(texts[i]!, 16).forEach((value, d) => assert.closeTo(vector[d]!, value, 1e-6))
      })
      const requests = embeddingRequests(server)
      // The probe at start, then 7 inputs in batches of 3.
      assert.deepStrictEqual(requests.map((request) => request.body.input.length), [1, 3, 3, 1])
      for (const request of requests) {
        assert.strictEqual(request.headers.authorization, `Bearer ${KEY}`)
        assert.strictEqual(request.body.model, "text-embedding-test")
        assert.isUndefined(request.body.dimensions)
      }
    }))

  it.live("sends configured dimensions and skips the probe", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const embeddings = yield* embedder({ baseUrl: server.baseUrl, dimensions: 8 })
      const vector = yield* embeddings.embedQuery("")
      assert.strictEqual(vector.length, 8)
      const requests = embeddingRequests(server)
      assert.strictEqual(requests.length, 1)
      assert.strictEqual(requests[0]!.body.dimensions, 8)
      assert.deepStrictEqual(requests[0]!.body.input, [" "])
      assert.deepStrictEqual(yield* embeddings.embedDocuments([]), [])
      assert.strictEqual(embeddingRequests(server).length, 1)
    }))

  it.live("retries a 500, a 503 and a dropped connection, then succeeds", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const proxy = yield* flakyUpstream(server.baseUrl)
      const embeddings = yield* embedder({ baseUrl: proxy.baseUrl, dimensions: 16 })
      proxy.fail({ status: 500 }, { status: 503 }, { drop: true })
      const vector = yield* embeddings.embedQuery("hello")
      fakeEmbedding("hello", 16).forEach((value, d) => assert.closeTo(vector[d]!, value, 1e-6))
      assert.strictEqual(proxy.hits(), 4)
    }))

  it.live("gives up after the configured retries with a retryable error", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const proxy = yield* flakyUpstream(server.baseUrl)
      const embeddings = yield* embedder({ baseUrl: proxy.baseUrl, dimensions: 16, maxRetries: 2 })
      proxy.fail({ status: 502 }, { status: 502 }, { status: 502 }, { status: 502 })
      const error = yield* Effect.flip(embeddings.embedQuery("hello"))
      assert.isTrue(error.retryable)
      assert.match(error.message, /answered 502/)
      assert.strictEqual(proxy.hits(), 3)
    }))

  it.live("fails fast on a 401 with a clear message that never contains the key", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const proxy = yield* flakyUpstream(server.baseUrl)
      const embeddings = yield* embedder({ baseUrl: proxy.baseUrl, dimensions: 16 })
      proxy.fail({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.` } } })
      const error = yield* Effect.flip(embeddings.embedDocuments(["hello"]))
      assert.isFalse(error.retryable)
      assert.match(error.message, /answered 401 \(check SERVICE_API_EMBEDDINGS_API_KEY\): Incorrect API key provided/)
      assert.notInclude(error.message, KEY)
      assert.notInclude(JSON.stringify(error), KEY)
      assert.strictEqual(proxy.hits(), 1)
    }))

  it.live("times out an attempt that gets no answer", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const proxy = yield* flakyUpstream(server.baseUrl)
      const embeddings = yield* embedder({
        baseUrl: proxy.baseUrl,
        dimensions: 16,
        timeout: "200 millis",
        maxRetries: 0
      })
      proxy.fail({ hang: true })
      const error = yield* Effect.flip(embeddings.embedQuery("hello"))
      assert.isTrue(error.retryable)
      assert.match(error.message, /timed out/)
    }))

  it.live("fails the start when the dimension probe is refused", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const proxy = yield* flakyUpstream(server.baseUrl)
      proxy.fail({ status: 403 })
      const error = yield* Effect.flip(embedder({ baseUrl: proxy.baseUrl }))
      assert.match(error.message, /discovering the embedding dimension: .*answered 403/)
    }))
})

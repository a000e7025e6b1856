/**
 * Recall with query expansion on, as the offline defaults run it (GloVe sentence vectors and GloVe word neighbours):
 * the expansion scans the word pool for every query word not seen before, in slices between turns of the event
 * loop, and the answer is the same whether the words were new or remembered.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { glove } from "../../../layers/models/embeddings/EmbeddingsLive.ts"
import { GloveTable } from "../../../layers/models/embeddings/GloveTable.ts"
import { GloveWords } from "../../../layers/models/embeddings/GloveWords.ts"
import { Llm } from "../../../src/models/Llm.ts"
import { WordVectors } from "../../../src/models/WordVectors.ts"
import { sharedGloveCacheDir } from "../../layers/models/embeddings/GloveCacheDir.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const wordVectors = Layer.effect(
  WordVectors,
  Effect.gen(function*() {
    const words = yield* GloveWords
    return WordVectors.of({ nearest: (word, k) => words.nearest(word, k) })
  })
).pipe(
  Layer.provide(GloveWords.layer()),
  Layer.provide(GloveTable.layer({ cacheDir: sharedGloveCacheDir })),
  Layer.provide(NodeFileSystem.layer)
)
const models = Layer.mergeAll(glove({ cacheDir: sharedGloveCacheDir }), wordVectors, Llm.layerNone)
const bank = "/v1/default/banks/recall-expansion"

const memories = [
  "Melanie painted a mural of sunflowers on the school wall.",
  "Caroline ran a marathon in Boston last spring.",
  "Jon cooked a spicy curry for his neighbours.",
  "Gina adopted a small grey kitten from the shelter.",
  "Tim repaired the old bicycle his grandfather gave him."
]

layer(testApp({}, undefined, models), { excludeTestServices: true, timeout: "2 minutes" })(
  "recall with query expansion",
  (it) => {
    it.effect("answers with the memory the query is about, the same when its words are new and when remembered", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const retained = yield* server.request("POST", `${bank}/memories`, {
          json: { items: memories.map((content) => ({ content })) }
        })
        assert.strictEqual(retained.status, 200, retained.text)
        const recall = (query: string) =>
          server.request("POST", `${bank}/memories/recall`, { json: { query, budget: "mid" } }).pipe(
            Effect.tap((response) => Effect.sync(() => assert.strictEqual(response.status, 200, response.text))),
            Effect.map((response) => (response.body.results as Array<{ text: string }>).map((result) => result.text))
          )
        const query = "Which painting did Melanie create on the school building?"
        const first = yield* recall(query)
        assert.include(first[0] ?? "", "Melanie painted a mural", JSON.stringify(first))
        assert.deepStrictEqual(yield* recall(query), first)
        const kitten = yield* recall("Who adopted a cat from the animal shelter?")
        assert.include(kitten[0] ?? "", "kitten", JSON.stringify(kitten))
      }))
  }
)

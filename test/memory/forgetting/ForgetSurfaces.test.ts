/**
 * Forgetting an entity, seen from the state surface and the dataset exports, over the real HTTP server on both
 * tiers. The state surface (graph intelligence, the state summary and neighbourhood, an investigation, and the MCP
 * `graph_intelligence` and `investigate_graph` tools) is read before the forget, so its cached answers hold the
 * entity; a dataset whose sets were retained into the bank is exported (both adapters, REST and MCP) before and
 * after. After the forget none of them returns the entity's name or content, and the other entity is still there.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { stateSurfaceViews } from "../../support/StateSurfaceViews.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "forget-surfaces"
const base = bankPath(bank)
const taste = `${base}/forge/taste`
const name = "Zephyrine Okafor"
const about = [
  "Zephyrine Okafor keeps the spare office key under the blue flowerpot.",
  "Zephyrine Okafor moved the spare office key to the green flowerpot in June.",
  "Zephyrine Okafor leads the Lisbon design team."
]
const others = [
  "Marguerite Delacroix waters the office plants every Monday.",
  "Marguerite Delacroix stopped watering the office plants in July."
]
/** Words only the entity's memories and sets hold. */
const secrets = ["Zephyrine", "Okafor", "flowerpot"]

const stateViews = stateSurfaceViews(bank, ["Where is the spare office key?", "What changed about Zephyrine Okafor?"])

/** The dataset exported by both adapters over REST and by the MCP tool, as text. */
const exports = (datasetId: string) =>
  Effect.gen(function*() {
    const texts: Record<string, string> = {}
    for (const adapter of ["chat_messages_jsonl", "atr_jsonl"]) {
      texts[adapter] = (yield* ok("POST", `${taste}/export`, { dataset_id: datasetId, adapter_id: adapter })).text
    }
    const server = yield* TestServer
    const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
    texts["mcp export_dataset"] = JSON.stringify(yield* mcp.ok("export_dataset", { dataset_id: datasetId }))
    return texts
  })

const assertNone = (texts: Record<string, string>, words: ReadonlyArray<string>) => {
  for (const [view, text] of Object.entries(texts)) {
    for (const word of words) {
      const at = text.indexOf(word)
      assert.strictEqual(at, -1, `${view} still returns "${word}": ${text.slice(Math.max(0, at - 300), at + 100)}`)
    }
  }
}

layer(testApp({ mcpToolFamilies: ["graph", "datasets"] }), { excludeTestServices: true, timeout: "4 minutes" })(
  "forget: the state surface and dataset exports",
  (it) => {
    it.effect(
      "after forgetting an entity no state view, investigation or dataset export returns it; the other entity stays",
      () =>
        Effect.gen(function*() {
          yield* ok("POST", `${base}/memories`, {
            items: [
              ...about.map((content) => ({ content, entities: [{ text: name }] })),
              ...others.map((content) => ({ content, entities: [{ text: "Marguerite Delacroix" }] }))
            ]
          })
          // A dataset built from the same material, retained into the bank: its sets produced memories.
          const dataset = (yield* ok("POST", `${taste}/datasets`, { name: "office", schema_type: "qa_pair" })).body.id
          const imported = (yield* ok("POST", `${taste}/datasets/${dataset}/sets`, {
            sets: [
              { question: "Where does Zephyrine Okafor keep the spare key?", answer: "Zephyrine Okafor: flowerpot." },
              { question: "Who leads the Lisbon team?", answer: "Zephyrine Okafor leads the Lisbon design team." },
              { question: "Who waters the plants?", answer: "Marguerite Delacroix waters the office plants." }
            ]
          })).body.sets as Array<any>
          const retained = yield* ok("POST", `${taste}/retain`, { set_ids: imported.map((set) => set.id) })
          assert.strictEqual(retained.body.retained_count, 3)
          yield* settled(bank)

          const statesBefore = yield* stateViews
          const exportsBefore = yield* exports(dataset)
          for (const [view, text] of Object.entries({ ...statesBefore, ...exportsBefore })) {
            assert.include(text, "Zephyrine", `${view} shows the entity before the forget`)
          }
          // Read twice: the second answer is the cached one the forget must not leave behind.
          assert.include(
            (yield* ok("GET", `${base}/graph/intelligence?window_days=0&confidence_min=0&limit=100`)).text,
            "\"cached\":true"
          )

          const report = (yield* ok("POST", `${base}/forget`, { entity: name })).body
          assert.isAtLeast(report.removed.memories, about.length + 2)
          assert.strictEqual(report.removed.dataset_sets, 2, JSON.stringify(report.removed))
          yield* settled(bank)

          const statesAfter = yield* stateViews
          const exportsAfter = yield* exports(dataset)
          assertNone({ ...statesAfter, ...exportsAfter }, secrets)
          for (const view of ["graph/intelligence?window_days=0&confidence_min=0&limit=100", "chat_messages_jsonl"]) {
            const text = { ...statesAfter, ...exportsAfter }[view]!
            assert.include(text, "Marguerite", `${view} still shows the other entity`)
          }
        }),
      240_000
    )
  }
)

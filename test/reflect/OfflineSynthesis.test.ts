/** The offline summary: labelled, best match first, the rest in time order, duplicates and restatements folded. */
import { assert, describe, it } from "@effect/vitest"
import { Evidence } from "../../src/reflect/Evidence.ts"
import { offlineLabel, synthesize } from "../../src/reflect/OfflineSynthesis.ts"

const memory = (id: string, text: string, score: number, date: string | null, type = "world") => ({
  id,
  text,
  type,
  entities: null,
  context: null,
  occurred_start: date,
  occurred_end: null,
  mentioned_at: null,
  document_id: null,
  metadata: null,
  chunk_id: null,
  tags: null,
  source_fact_ids: null,
  score
})

describe("offline synthesis", () => {
  it("orders, folds and labels", () => {
    const evidence = new Evidence(10_000)
    evidence.addMemories([
      memory("a", "The bridge closed for repairs.", 0.9, "2024-03-10T00:00:00Z"),
      memory("b", "The bridge reopened after repairs.", 0.7, "2024-06-01T00:00:00Z"),
      memory("c", "A survey found cracks in the bridge.", 0.6, "2024-01-05T00:00:00Z"),
      memory("d", "The bridge closed for repairs!", 0.5, "2024-03-10T00:00:00Z"),
      memory("o", "bridge — repairs: The bridge closed for repairs.", 0.8, null, "observation")
    ])
    const { text, memories } = synthesize({ question: "What happened to the bridge?", evidence, label: offlineLabel })
    assert.isTrue(text.startsWith(`> ${offlineLabel}`))
    assert.include(text, "**Best match:** 2024-03-10 — The bridge closed for repairs.")
    assert.isBelow(text.indexOf("cracks"), text.indexOf("reopened"))
    assert.strictEqual(text.match(/closed for repairs/g)?.length, 1)
    assert.deepStrictEqual(memories.map((m) => m.id), ["a", "c", "b"])
  })

  it("says so when there is nothing", () => {
    const { text, memories } = synthesize({ question: "Anything?", evidence: new Evidence(100), label: offlineLabel })
    assert.include(text, "Nothing in this bank's memories matches \"Anything?\"")
    assert.deepStrictEqual(memories, [])
  })
})

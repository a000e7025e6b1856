/**
 * Dataset curation with a language model (a scripted OpenAI-compatible server on loopback): the round trip
 * import → transform → generate → retain → export with every exported line checked, an answer that breaks the
 * example's shape refused for that set while the others proceed, and large batches as background operations
 * whose stage and progress can be watched.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { eventually } from "../support/TestTasks.ts"
import { checkChatLines, createDataset, importJsonl, request, taste } from "./datasets-support.ts"
import { onePurpose, Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const llmModels = scriptedModels(onePurpose("consolidation", "editor", "2 seconds"))

const app = scriptedApp({ operationMaxAttempts: 1, operationRetryBase: Duration.millis(5) }, llmModels)

const texts = (...values: Array<string>) => ({ content: JSON.stringify({ texts: values }) })

const typoRows = [
  {
    messages: [{ role: "user", content: "Wher is the Eiffel towr?" }, {
      role: "assistant",
      content: "It is in Paris, Frnace."
    }]
  },
  {
    messages: [{ role: "user", content: "Wat is water made of?" }, {
      role: "assistant",
      content: "Hydrogen and oxygn."
    }]
  }
]

const finished = (bankId: string, operationId: string) =>
  eventually(
    request("GET", `/v1/default/banks/${bankId}/operations/${operationId}/result`),
    (r) => r.body.status === "completed" || r.body.status === "failed",
    Duration.seconds(30)
  )

layer(app, { excludeTestServices: true })("datasets with a language model", (it) => {
  it.effect("round trip: import → spellfix → variants → retain → export, every exported line valid", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = yield* createDataset("trip", "openai_chat", ["geo"])
      const sets = yield* importJsonl("trip", id, typoRows)

      scripted.script(
        texts("Where is the Eiffel Tower?", "It is in Paris, France."),
        texts("What is water made of?", "Hydrogen and oxygen.")
      )
      const fixed = yield* request("POST", `${taste("trip")}/transform`, {
        dataset_id: id,
        ops: [{ op: "raw" }, { op: "spellfix_llm" }]
      })
      assert.strictEqual(fixed.status, 200, fixed.text)
      assert.strictEqual(fixed.body.async, false)
      assert.strictEqual(fixed.body.updated_count, 2)
      assert.strictEqual(fixed.body.items[0].model, "openai/editor")
      const sent = scripted.chatRequests().at(-2)!.body
      assert.strictEqual(sent.temperature, 0.1)
      assert.include(sent.messages[1].content, "Correct spelling")
      assert.include(sent.messages[1].content, "\"Wher is the Eiffel towr?\"")

      const seed = (yield* request("GET", `${taste("trip")}/sets/${sets[0].id}`)).body
      assert.deepStrictEqual(seed.working_payload.messages.map((m: any) => m.content), [
        "Where is the Eiffel Tower?",
        "It is in Paris, France."
      ])
      assert.deepStrictEqual(seed.source_payload, typoRows[0], "the seed never changes")
      // A chain logs every op: raw (hash unchanged, no model), then spellfix from where raw left off.
      assert.deepStrictEqual(seed.transform_log.map((entry: any) => entry.op), ["raw", "spellfix_llm"])
      assert.strictEqual(seed.transform_log[0].before_hash, seed.transform_log[0].after_hash)
      assert.isNull(seed.transform_log[0].model)
      assert.strictEqual(seed.transform_log[1].before_hash, seed.transform_log[0].after_hash)
      assert.notStrictEqual(seed.transform_log[1].after_hash, seed.transform_log[1].before_hash)
      assert.strictEqual(seed.transform_log[1].model, "openai/editor")

      // Preview changes nothing.
      scripted.script(texts("Where's the Eiffel Tower?", "Paris."))
      const preview = yield* request("POST", `${taste("trip")}/transform`, {
        dataset_id: id,
        set_ids: [sets[0].id],
        preview: true,
        ops: [{ op: "tone_shift", params: { tone: "concise" } }]
      })
      assert.strictEqual(preview.body.items[0].after.messages[1].content, "Paris.")
      assert.strictEqual(scripted.chatRequests().at(-1)!.body.temperature, 0.4)
      const unchanged = (yield* request("GET", `${taste("trip")}/sets/${sets[0].id}`)).body
      assert.deepStrictEqual(unchanged.working_payload, seed.working_payload)
      assert.strictEqual(unchanged.transform_log.length, 2)

      scripted.script({
        content: JSON.stringify({
          variants: [
            ["Where can I find the Eiffel Tower?", "You will find it in Paris, France."],
            ["In which city is the Eiffel Tower?", "Paris, in France."]
          ]
        })
      })
      const generated = yield* request("POST", `${taste("trip")}/datasets/${id}/generate`, {
        set_ids: [sets[0].id],
        count: 2
      })
      assert.strictEqual(generated.status, 200, generated.text)
      assert.strictEqual(generated.body.created_count, 2)
      for (const [index, variant] of generated.body.sets.entries()) {
        assert.strictEqual(variant.set_key, sets[0].set_key)
        assert.strictEqual(variant.variant_index, index + 1)
        assert.strictEqual(variant.parent_set_id, sets[0].id)
        assert.deepStrictEqual(variant.taste_tags, ["geo"])
        assert.strictEqual(variant.transform_log[0].op, "generate_variant")
        assert.strictEqual(variant.transform_log[0].before_hash, seed.transform_log[1].after_hash)
      }
      assert.strictEqual(scripted.chatRequests().at(-1)!.body.temperature, 0.7)
      const fromVariant = yield* request("POST", `${taste("trip")}/datasets/${id}/generate`, {
        set_ids: [generated.body.sets[0].id]
      })
      assert.strictEqual(fromVariant.status, 400)
      assert.include(fromVariant.body.detail, "is a variant")

      const all = (yield* request("GET", `${taste("trip")}/datasets/${id}/sets`)).body.sets as Array<any>
      assert.strictEqual(all.length, 4)
      const retained = yield* request("POST", `${taste("trip")}/retain`, { set_ids: all.map((set) => set.id) })
      assert.strictEqual(retained.status, 200, retained.text)
      assert.strictEqual(retained.body.retained_count, 4)

      const exported = yield* request("POST", `${taste("trip")}/export`, { dataset_id: id })
      assert.strictEqual(exported.body.adapter_id, "chat_messages_jsonl")
      const lines = checkChatLines(exported.body.content)
      assert.strictEqual(lines.length, 4)
      const current = (yield* request("GET", `${taste("trip")}/datasets/${id}/sets`)).body.sets as Array<any>
      assert.deepStrictEqual(
        lines,
        current.map((set) => set.working_payload),
        "exactly the working messages, in set order"
      )
      assert.strictEqual(exported.body.lineage.variant_count, 2)
      const atr = yield* request("POST", `${taste("trip")}/export`, { dataset_id: id, adapter_id: "atr_jsonl" })
      const records = (atr.body.content as string).trim().split("\n").map((line) => JSON.parse(line))
      assert.strictEqual(records[1].lineage.parent_set_id, sets[0].id)
      assert.isAbove(records[0].provenance.memory_unit_ids.length, 0)
    }))

  it.effect("an answer that breaks the example's shape is refused for that set; the other set is transformed", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = yield* createDataset("shape", "chat_messages")
      const third = {
        messages: [{ role: "user", content: "Hw old is the sun?" }, {
          role: "assistant",
          content: "About 4.6 billion yers."
        }]
      }
      const sets = yield* importJsonl("shape", id, [...typoRows, third])
      // Set 1: one text for a two-message example. Set 2: no JSON at all, twice (the model gets one corrective
      // retry for an answer that does not parse). Set 3: a good answer.
      scripted.script(
        texts("Only one text"),
        { content: "Sure! Here you go." },
        { content: "no json, sorry" },
        texts("How old is the sun?", "About 4.6 billion years.")
      )
      const result = yield* request("POST", `${taste("shape")}/transform`, {
        dataset_id: id,
        ops: [{ op: "tone_shift", params: { tone: "formal" } }]
      })
      assert.strictEqual(result.status, 200, result.text)
      assert.strictEqual(result.body.updated_count, 1)
      assert.strictEqual(result.body.failed_count, 2)
      assert.include(
        result.body.items[0].error,
        "tone_shift answer does not fit the example: it returned 1 texts for the 2"
      )
      assert.isNull(result.body.items[0].after)
      assert.include(result.body.items[1].error, "tone_shift failed")
      assert.include(result.body.items[1].error, "did not produce a valid rewritten_texts")
      assert.deepStrictEqual(
        (yield* request("GET", `${taste("shape")}/sets/${sets[0].id}`)).body.working_payload,
        typoRows[0]
      )
      assert.deepStrictEqual((yield* request("GET", `${taste("shape")}/sets/${sets[1].id}`)).body.transform_log, [])
      assert.strictEqual(
        (yield* request("GET", `${taste("shape")}/sets/${sets[2].id}`)).body.working_payload.messages[1].content,
        "About 4.6 billion years."
      )
    }))

  it.effect("large batches run as operations: progress in the stage, a hung set fails alone, variants in bulk", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = yield* createDataset("bulk", "qa_pair")
      const rows = Array.from({ length: 5 }, (_, n) => ({ question: `Question nmber ${n}?`, answer: `Answr ${n}.` }))
      const sets = yield* importJsonl("bulk", id, rows)
      scripted.script(
        texts("Question number 0?", "Answer 0."),
        texts("Question number 1?", "Answer 1."),
        { hang: true },
        texts("Question number 3?", "Answer 3."),
        texts("Question number 4?", "Answer 4.")
      )
      const queued = yield* request("POST", `${taste("bulk")}/transform`, {
        dataset_id: id,
        ops: [{ op: "spellfix_llm" }]
      })
      assert.strictEqual(queued.status, 200, queued.text)
      assert.strictEqual(queued.body.async, true)
      const operationId = queued.body.operation_id as string
      const midway = yield* eventually(
        request("GET", `/v1/default/banks/bulk/operations/${operationId}`),
        (r) => r.body.progress?.done === 2
      )
      assert.strictEqual(midway.body.stage, "transform")
      assert.include(midway.body.progress, { done: 2, total: 5, processed: 2 })
      assert.strictEqual(midway.body.task_type, "taste_transform")

      const done = yield* finished("bulk", operationId)
      assert.strictEqual(done.body.status, "completed", done.text)
      assert.strictEqual(done.body.result.updated_count, 4)
      assert.strictEqual(done.body.result.failed_count, 1)
      assert.include(done.body.result.items[2].error, "spellfix_llm failed")
      const detail = yield* request("GET", `/v1/default/banks/bulk/operations/${operationId}`)
      assert.strictEqual(detail.body.stage, "completed")
      assert.include(detail.body.progress, { done: 5, total: 5, processed: 5 })
      assert.strictEqual(
        (yield* request("GET", `${taste("bulk")}/sets/${sets[4].id}`)).body.working_payload.answer,
        "Answer 4."
      )

      const variants = (n: number) => ({
        content: JSON.stringify({
          variants: Array.from({ length: 8 }, (_, k) => [`Q${n} variant ${k}?`, `A${n} variant ${k}.`])
        })
      })
      scripted.script(variants(0), variants(1))
      const generate = yield* request("POST", `${taste("bulk")}/datasets/${id}/generate`, {
        set_ids: [sets[0].id, sets[1].id]
      })
      assert.strictEqual(generate.body.async, true, generate.text)
      const generated = yield* finished("bulk", generate.body.operation_id)
      assert.strictEqual(generated.body.status, "completed", generated.text)
      assert.strictEqual(generated.body.result.created_count, 16)
      const dataset = (yield* request("GET", `${taste("bulk")}/datasets/${id}`)).body
      assert.strictEqual(dataset.variant_count, 16)
      assert.strictEqual(dataset.seed_count, 5)
    }))
})

/**
 * Dataset curation over the real HTTP server with no language model: datasets (alias, immutable schema type,
 * counts), imports that are all-or-nothing with line-numbered errors, set edits with their log, status rules,
 * revert, `raw` transforms, the 400 naming SERVICE_API_LLM_PROVIDER for model ops, retain into the bank with
 * tags and linked memories, and both exporters with every line checked.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SetImportResponse } from "../../src/domain/Dataset.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { checkChatLines, createDataset, importJsonl, request, taste } from "./datasets-support.ts"

const chatRows = [
  {
    messages: [{ role: "system", content: "You are terse." }, {
      role: "user",
      content: "What is the capital of France?"
    }, { role: "assistant", content: "Paris." }]
  },
  {
    messages: [{ role: "user", content: "Who wrote Hamlet?" }, {
      role: "assistant",
      content: "William Shakespeare.",
      name: "tutor"
    }]
  },
  {
    messages: [{ role: "user", content: "How many legs does a spider have?" }, { role: "assistant", content: "Eight." }]
  }
]

layer(testApp(), { excludeTestServices: true })("datasets offline", (it) => {
  it.effect("catalog, dataset CRUD with the openai_chat alias, an immutable schema type and set counts", () =>
    Effect.gen(function*() {
      const catalog = yield* request("GET", `${taste("cat")}/catalog`)
      assert.strictEqual(catalog.status, 200, catalog.text)
      assert.deepStrictEqual(catalog.body.schema_types.map((type: any) => type.id), [
        "chat_messages",
        "qa_pair",
        "custom"
      ])
      assert.deepStrictEqual(catalog.body.transform_ops.map((op: any) => op.op_id), [
        "spellfix_llm",
        "tone_shift",
        "raw"
      ])
      assert.deepStrictEqual(catalog.body.exporters.map((e: any) => e.adapter_id), ["chat_messages_jsonl", "atr_jsonl"])
      assert.strictEqual(catalog.body.llm_available, false)

      const created = yield* request("POST", `${taste("crud")}/datasets`, {
        name: " Support ",
        schema_type: "openai_chat",
        taste_tags: ["support", "support"]
      })
      assert.strictEqual(created.status, 200, created.text)
      assert.strictEqual(created.body.schema_type, "chat_messages")
      assert.strictEqual(created.body.name, "Support")
      assert.deepStrictEqual(created.body.taste_tags, ["support"])
      assert.strictEqual(created.body.set_count, 0)
      const id = created.body.id

      const refused = yield* request("PATCH", `${taste("crud")}/datasets/${id}`, { schema_type: "qa_pair" })
      assert.strictEqual(refused.status, 400)
      assert.include(refused.body.detail, "schema_type")
      const renamed = yield* request("PATCH", `${taste("crud")}/datasets/${id}`, {
        name: "Support v2",
        taste_profile: { voice: "warm" }
      })
      assert.strictEqual(renamed.body.name, "Support v2")
      assert.strictEqual(renamed.body.schema_type, "chat_messages")
      assert.deepStrictEqual(renamed.body.taste_profile, { voice: "warm" })

      yield* importJsonl("crud", id, chatRows)
      const listed = yield* request("GET", `${taste("crud")}/datasets`)
      assert.strictEqual(listed.body.datasets.length, 1)
      assert.strictEqual(listed.body.datasets[0].set_count, 3)
      assert.deepStrictEqual(listed.body.datasets[0].status_counts, { draft: 3 })

      const badType = yield* request("POST", `${taste("crud")}/datasets`, { name: "x", schema_type: "tabular" })
      assert.strictEqual(badType.status, 400)
      assert.include(badType.body.detail, "schema_type")
      assert.strictEqual((yield* request("GET", `${taste("nobank")}/datasets`)).status, 404)
      assert.strictEqual((yield* request("GET", `${taste("crud")}/datasets/nope`)).status, 404)

      const deleted = yield* request("DELETE", `${taste("crud")}/datasets/${id}`)
      assert.deepStrictEqual(deleted.body, { deleted: true, dataset_id: id, sets_deleted: 3 })
      assert.strictEqual((yield* request("GET", `${taste("crud")}/datasets/${id}`)).status, 404)
    }))

  it.effect("a large import is answered in full, streamed piece by piece, in the declared shape, every set stored", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("big", "chat_messages", ["bulk"])
      // Over one insert statement (500 sets) and over one piece of the streamed answer (200 sets).
      const rows = Array.from({ length: 1_234 }, (_, n) => ({
        messages: [{ role: "user", content: `Question ${n}: é, "quotes", \\ and a tab\t?` }, {
          role: "assistant",
          content: `Answer ${n}.`
        }]
      }))
      const server = yield* TestServer
      const answer = yield* Effect.promise(async () => {
        const response = await fetch(`${server.url}${taste("big")}/datasets/${id}/sets`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonl: rows.map((row) => JSON.stringify(row)).join("\n") })
        })
        return {
          status: response.status,
          chunked: response.headers.get("transfer-encoding"),
          text: await response.text()
        }
      })
      assert.strictEqual(answer.status, 200, answer.text.slice(0, 500))
      assert.strictEqual(answer.chunked, "chunked")
      const body = JSON.parse(answer.text)
      // Sent as built, never through the schema's encoder: it must be exactly what the schema would send.
      const roundTrip = Schema.encodeUnknownSync(SetImportResponse)(
        Schema.decodeUnknownSync(SetImportResponse)(body, { onExcessProperty: "ignore" })
      )
      assert.deepStrictEqual(roundTrip, body)
      assert.strictEqual(body.dataset_id, id)
      assert.strictEqual(body.imported_count, rows.length)
      assert.deepStrictEqual(body.sets.map((set: any) => set.source_payload), rows)
      assert.deepStrictEqual(
        body.sets.map((set: any) => set.set_key),
        rows.map((_, n) => `set_${String(n + 1).padStart(4, "0")}`)
      )
      assert.isTrue(body.sets.every((set: any) => set.status === "draft" && set.taste_tags.includes("bulk")))

      const stored = yield* request("GET", `${taste("big")}/datasets/${id}`)
      assert.strictEqual(stored.body.set_count, rows.length)
      const last = yield* request("GET", `${taste("big")}/datasets/${id}/sets?limit=1&offset=${rows.length - 1}`)
      assert.deepStrictEqual(last.body.sets[0].working_payload, rows.at(-1))
      assert.strictEqual(last.body.sets[0].id, body.sets.at(-1).id)
    }))

  it.effect("a malformed JSONL import names every bad line and imports nothing; exactly one of jsonl or sets", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("imp", "chat_messages")
      const jsonl = [
        JSON.stringify(chatRows[0]),
        "{not json",
        JSON.stringify({ messages: [] }),
        "",
        JSON.stringify({ messages: [{ role: "user", content: "" }] }),
        JSON.stringify(chatRows[1])
      ].join("\n")
      const bad = yield* request("POST", `${taste("imp")}/datasets/${id}/sets`, { jsonl })
      assert.strictEqual(bad.status, 400, bad.text)
      assert.include(bad.body.detail, "3 invalid rows, nothing was imported")
      assert.deepStrictEqual(bad.body.errors.map((error: any) => error.field), [
        "jsonl line 2",
        "jsonl line 3",
        "jsonl line 5"
      ])
      assert.include(bad.body.errors[0].message, "not valid JSON")
      assert.include(bad.body.errors[1].message, "messages must be a non-empty array")
      assert.include(bad.body.errors[2].message, "messages[0].content must be a non-empty string")
      assert.strictEqual((yield* request("GET", `${taste("imp")}/datasets/${id}/sets`)).body.total, 0)

      const both = yield* request("POST", `${taste("imp")}/datasets/${id}/sets`, { jsonl: "", sets: [] })
      assert.strictEqual(both.status, 400)
      assert.include(both.body.detail, "exactly one of jsonl or sets")
      const badArray = yield* request("POST", `${taste("imp")}/datasets/${id}/sets`, {
        sets: [chatRows[0], { question: "q" }]
      })
      assert.strictEqual(badArray.status, 400)
      assert.strictEqual(badArray.body.errors[0].field, "sets[1]")

      const qa = yield* createDataset("imp", "qa_pair")
      const qaBad = yield* request("POST", `${taste("imp")}/datasets/${qa}/sets`, {
        sets: [{ question: "Why?", answer: " " }]
      })
      assert.include(qaBad.body.detail, "answer must be a non-empty string")
      const imported = yield* request("POST", `${taste("imp")}/datasets/${qa}/sets`, {
        sets: [{ question: "Why is the sky blue?", answer: "Rayleigh scattering." }, { question: "2+2?", answer: "4" }],
        set_key_prefix: "faq",
        taste_tags: ["physics"]
      })
      assert.strictEqual(imported.status, 200, imported.text)
      assert.deepStrictEqual(imported.body.sets.map((set: any) => set.set_key), ["faq_0001", "faq_0002"])
      assert.deepStrictEqual(imported.body.sets[0].taste_tags, ["physics"])
      const next = yield* request("POST", `${taste("imp")}/datasets/${qa}/sets`, {
        jsonl: JSON.stringify({ question: "a?", answer: "b" })
      })
      assert.strictEqual(next.body.sets[0].set_key, "set_0003")
      const page = yield* request("GET", `${taste("imp")}/datasets/${qa}/sets?limit=2&offset=1`)
      assert.strictEqual(page.body.total, 3)
      assert.deepStrictEqual(page.body.sets.map((set: any) => set.set_key), ["faq_0002", "set_0003"])

      // Escaped inside the JSONL string, a NUL and a lone surrogate get the same cleaning as request bodies.
      const odd = yield* request("POST", `${taste("imp")}/datasets/${qa}/sets`, {
        jsonl: "{\"question\":\"nul\\u0000here?\",\"answer\":\"\\ud800 lone\"}"
      })
      assert.strictEqual(odd.status, 200, odd.text)
      assert.deepStrictEqual(odd.body.sets[0].working_payload, { question: "nulhere?", answer: "\ufffd lone" })
    }))

  it.effect("edits are validated and logged with hashes, status changes follow the rules, revert restores the seed", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("edit", "chat_messages")
      const [first] = yield* importJsonl("edit", id, chatRows.slice(0, 1))
      const path = `${taste("edit")}/sets/${first.id}`
      const invalid = yield* request("PATCH", path, {
        working_payload: { messages: [{ role: "wizard", content: "hi" }] }
      })
      assert.strictEqual(invalid.status, 400)
      assert.include(invalid.body.detail, "messages[0].role must be one of")

      const edited = {
        messages: [{ role: "user", content: "Capital of France?" }, { role: "assistant", content: "Paris." }]
      }
      const patched = yield* request("PATCH", path, { working_payload: edited, taste_tags: ["geo"], status: "ready" })
      assert.strictEqual(patched.status, 200, patched.text)
      assert.deepStrictEqual(patched.body.working_payload, edited)
      assert.deepStrictEqual(patched.body.source_payload, chatRows[0])
      assert.strictEqual(patched.body.status, "ready")
      assert.strictEqual(patched.body.transform_log.length, 1)
      assert.strictEqual(patched.body.transform_log[0].op, "edit")
      assert.notStrictEqual(patched.body.transform_log[0].before_hash, patched.body.transform_log[0].after_hash)

      const toRetained = yield* request("PATCH", path, { status: "retained" })
      assert.strictEqual(toRetained.status, 400)
      assert.include(toRetained.body.detail, "only through POST")
      assert.strictEqual((yield* request("PATCH", path, { status: "archived" })).body.status, "archived")
      const archivedToReady = yield* request("PATCH", path, { status: "ready" })
      assert.strictEqual(archivedToReady.status, 400)
      assert.include(archivedToReady.body.detail, "cannot change from archived to ready")

      const reverted = yield* request("POST", `${path}/revert`)
      assert.deepStrictEqual(reverted.body.working_payload, chatRows[0])
      assert.strictEqual(reverted.body.status, "draft")
      assert.deepStrictEqual(reverted.body.transform_log.map((entry: any) => entry.op), ["edit", "revert"])
      assert.strictEqual(reverted.body.transform_log[1].after_hash, reverted.body.transform_log[0].before_hash)
      assert.strictEqual((yield* request("GET", `${taste("edit")}/sets/missing`)).status, 404)
    }))

  it.effect("offline: model ops and generation answer 400 naming SERVICE_API_LLM_PROVIDER; raw is applied and logged", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("off", "chat_messages")
      const sets = yield* importJsonl("off", id, chatRows)
      const spellfix = yield* request("POST", `${taste("off")}/transform`, {
        dataset_id: id,
        ops: [{ op: "spellfix_llm" }]
      })
      assert.strictEqual(spellfix.status, 400)
      assert.include(spellfix.body.detail, "SERVICE_API_LLM_PROVIDER")
      const generate = yield* request("POST", `${taste("off")}/datasets/${id}/generate`, { set_ids: [sets[0].id] })
      assert.strictEqual(generate.status, 400)
      assert.include(generate.body.detail, "SERVICE_API_LLM_PROVIDER")
      const badTone = yield* request("POST", `${taste("off")}/transform`, {
        dataset_id: id,
        ops: [{ op: "tone_shift", params: { tone: "angry" } }]
      })
      assert.strictEqual(badTone.status, 400)
      assert.include(badTone.body.detail, "ops[0].params.tone")

      const raw = yield* request("POST", `${taste("off")}/transform`, {
        dataset_id: id,
        set_ids: [sets[1].id],
        ops: [{ op: "raw" }]
      })
      assert.strictEqual(raw.status, 200, raw.text)
      assert.strictEqual(raw.body.updated_count, 1)
      assert.deepStrictEqual(raw.body.items[0].after, chatRows[1])
      const after = yield* request("GET", `${taste("off")}/sets/${sets[1].id}`)
      assert.strictEqual(after.body.transform_log[0].op, "raw")
      assert.strictEqual(after.body.transform_log[0].before_hash, after.body.transform_log[0].after_hash)

      const other = yield* createDataset("off", "chat_messages")
      const foreign = yield* request("POST", `${taste("off")}/transform`, {
        dataset_id: other,
        set_ids: [sets[0].id],
        ops: [{ op: "raw" }]
      })
      assert.strictEqual(foreign.status, 400)
      assert.include(foreign.body.detail, "belongs to dataset")
    }))

  it.effect("retain sends sets to the bank with taste tags and links the memories; a retained set is refused", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("ret", "qa_pair", ["trivia"])
      const sets = yield* importJsonl("ret", id, [
        { question: "Where does Alice work?", answer: "Alice works at Acme Corp in Berlin." },
        { question: "What does Bob play?", answer: "Bob plays the cello in an orchestra." }
      ])
      const retained = yield* request("POST", `${taste("ret")}/retain`, { set_ids: sets.map((set: any) => set.id) })
      assert.strictEqual(retained.status, 200, retained.text)
      assert.strictEqual(retained.body.retained_count, 2)
      assert.isAbove(retained.body.memory_unit_ids.length, 0)
      for (const set of retained.body.sets) {
        assert.strictEqual(set.status, "retained")
        assert.isAbove(set.memory_unit_ids.length, 0)
      }
      const unit = yield* request("GET", `/v1/default/banks/ret/memories/${retained.body.sets[0].memory_unit_ids[0]}`)
      assert.strictEqual(unit.status, 200, unit.text)
      assert.includeMembers(unit.body.tags, [
        "trivia",
        `taste:dataset:${id}`,
        "taste:set:set_0001",
        "source:taste_studio"
      ])

      const again = yield* request("POST", `${taste("ret")}/retain`, { set_ids: [sets[0].id] })
      assert.strictEqual(again.status, 400)
      assert.include(again.body.detail, "already retained")
      const edit = yield* request("PATCH", `${taste("ret")}/sets/${sets[0].id}`, {
        working_payload: { question: "a", answer: "b" }
      })
      assert.strictEqual(edit.status, 400)
      assert.include(edit.body.detail, "retained")
    }))

  it.effect("exports: chat lines are exactly the working messages (no set key turn), atr records carry lineage and quality", () =>
    Effect.gen(function*() {
      const id = yield* createDataset("exp", "chat_messages")
      const sets = yield* importJsonl("exp", id, chatRows)
      yield* request("PATCH", `${taste("exp")}/sets/${sets[2].id}`, { status: "archived" })
      const chat = yield* request("POST", `${taste("exp")}/export`, {
        dataset_id: id,
        adapter_id: "chat_messages_jsonl"
      })
      assert.strictEqual(chat.status, 200, chat.text)
      assert.strictEqual(chat.body.record_count, 2, "archived sets stay out of a whole-dataset export")
      const lines = checkChatLines(chat.body.content)
      assert.deepStrictEqual(lines, chatRows.slice(0, 2))
      assert.strictEqual(chat.body.quality_summary.pass_rate, 1)

      const alias = yield* request("POST", `${taste("exp")}/export`, {
        dataset_id: id,
        adapter_id: "openai_chat_jsonl",
        set_ids: [sets[2].id]
      })
      assert.deepStrictEqual(checkChatLines(alias.body.content), [chatRows[2]])

      const atr = yield* request("POST", `${taste("exp")}/export`, { dataset_id: id, adapter_id: "atr_jsonl" })
      const records = (atr.body.content as string).trim().split("\n").map((line) => JSON.parse(line))
      assert.strictEqual(records.length, 2)
      assert.strictEqual(records[0].record_id, `taste_${sets[0].id}`)
      assert.strictEqual(records[0].tasks[0].metadata.dataset_id, id)
      assert.strictEqual(records[0].labels.answer, "Paris.")
      assert.strictEqual(records[0].quality.exportable, true)
      assert.match(records[0].lineage.snapshot_hash, /^[0-9a-f]{64}$/)
      assert.strictEqual(atr.body.lineage.dataset_id, id)
      assert.strictEqual(atr.body.output_path, null)

      const custom = yield* createDataset("exp", "custom")
      yield* importJsonl("exp", custom, [{ prompt: "p", completion: "c" }])
      const held = yield* request("POST", `${taste("exp")}/export`, { dataset_id: custom })
      assert.strictEqual(held.body.content, "")
      assert.deepStrictEqual(held.body.quality_summary.issue_counts, { not_chat_shaped: 1 })
    }))
})

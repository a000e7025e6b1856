/**
 * Retain over HTTP with the offline pipeline: facts with metadata, times, entities and links; validation;
 * deduplication; documents (replace keeps unchanged chunks, append, delete); tags; async batches.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const conversation = [
  { speaker: "Caroline", text: "I went to a LGBTQ support group yesterday and it was so powerful." },
  { speaker: "Melanie", text: "That's great, Caroline! I painted a lake sunrise last year, it's special to me." },
  {
    speaker: "Caroline",
    text: "Caroline Smith is my full name, by the way. My friend Jolene moved to Paris last May."
  },
  { speaker: "Melanie", text: "She must love it there. I'm taking the kids camping next month." }
].map((turn, index) => ({
  content: `${turn.speaker}: ${turn.text}`,
  timestamp: "2023-05-08T13:56:00Z",
  context: "chat between friends",
  metadata: { dia_id: `D1:${index + 1}`, session: "1" },
  tags: ["friends"]
}))

layer(testApp(), { excludeTestServices: true })("retain", (it) => {
  it.effect("synchronous retain stores facts with metadata, resolved times and entities", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const response = yield* server.request("POST", `${bank("chat")}/memories`, { json: { items: conversation } })
      assert.strictEqual(response.status, 200, response.text)
      assert.strictEqual(response.body.success, true)
      assert.strictEqual(response.body.items_count, 4)
      assert.strictEqual(response.body.async, false)
      assert.deepStrictEqual(response.body.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 })

      const list = yield* server.request("GET", `${bank("chat")}/memories/list?limit=50`)
      assert.strictEqual(list.body.total, 4)
      const byTurn = new Map(list.body.items.map((item: any) => [item.metadata.dia_id, item]))
      const first: any = byTurn.get("D1:1")
      assert.include(first.text, "support group")
      assert.strictEqual(first.type, "experience")
      assert.deepStrictEqual(first.metadata, { dia_id: "D1:1", session: "1" })
      assert.deepStrictEqual(first.tags, ["friends"])
      assert.strictEqual(first.context, "chat between friends")
      assert.strictEqual(first.occurred_start, "2023-05-07T00:00:00.000Z")
      assert.strictEqual(first.mentioned_at, "2023-05-08T13:56:00.000Z")
      assert.include(first.entities, "Caroline Smith")
      const paris: any = byTurn.get("D1:3")
      assert.strictEqual(paris.occurred_start, "2022-05-01T00:00:00.000Z")

      const detail = yield* server.request("GET", `${bank("chat")}/memories/${first.id}`)
      assert.deepStrictEqual(detail.body.history, [])
      assert.strictEqual(detail.body.id, first.id)
      const chunk = yield* server.request("GET", `/v1/default/chunks/${first.chunk_id}`)
      assert.strictEqual(chunk.status, 200)
      assert.include(chunk.body.text, "support group")

      const entities = yield* server.request("GET", `${bank("chat")}/entities`)
      const top = entities.body.items.slice(0, 2).map((entity: any) => entity.canonical_name).sort()
      assert.deepStrictEqual(top, ["Caroline Smith", "Melanie"])
      const caroline = entities.body.items.find((entity: any) => entity.canonical_name === "Caroline Smith")
      assert.isAtLeast(caroline.mention_count, 3)
      assert.strictEqual(entities.body.items.filter((e: any) => e.canonical_name.startsWith("Caroline")).length, 1)
      const entity = yield* server.request("GET", `${bank("chat")}/entities/${caroline.id}`)
      assert.strictEqual(entity.body.canonical_name, "Caroline Smith")
      assert.isArray(entity.body.observations)
      const regenerated = yield* server.request("POST", `${bank("chat")}/entities/${caroline.id}/regenerate`)
      assert.strictEqual(regenerated.status, 200)

      const stats = yield* server.request("GET", `${bank("chat")}/stats`)
      assert.strictEqual(stats.body.total_nodes, 4)
      assert.isAbove(stats.body.links_by_link_type.temporal ?? 0, 0)
      assert.isAbove(stats.body.links_by_link_type.entity ?? 0, 0)
    }))

  it.effect("bad items answer 400 naming the field and store nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank("strict-retain"), { json: {} })
      const good = { content: "A fine fact about tea." }
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ items: [good, { context: "no content" }] }, "items.1.content"],
        [{ items: [{ content: "" }] }, "items.0.content"],
        [{ items: [{ ...good, timestamp: "last tuesday" }] }, "items.0.timestamp"],
        [{ items: [{ ...good, metadata: { source: 42 } }] }, "items.0.metadata.source"],
        [{ items: [{ ...good, document_id: "d", update_mode: "merge" }] }, "items.0.update_mode"],
        [{ items: [{ content: "x".repeat(1_000_001) }] }, "items.0.content"],
        [{ items: [] }, "items"],
        [{ items: [good], async: "yes" }, "async"]
      ]
      for (const [json, field] of cases) {
        const response = yield* server.request("POST", `${bank("strict-retain")}/memories`, { json })
        assert.strictEqual(response.status, 400, field)
        assert.include(response.body.errors.map((error: any) => error.field), field)
      }
      const list = yield* server.request("GET", `${bank("strict-retain")}/memories/list`)
      assert.strictEqual(list.body.total, 0)
    }))

  it.effect("re-sending the same facts does not create second memories", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const items = [{ content: "The office coffee machine is on the third floor." }, {
        content: "Lunch is served at noon."
      }]
      const first = yield* server.request("POST", `${bank("dedup")}/memories`, { json: { items } })
      assert.strictEqual(first.body.memories_created, 2)
      const again = yield* server.request("POST", `${bank("dedup")}/memories`, { json: { items } })
      assert.strictEqual(again.body.memories_created, 0)
      assert.strictEqual(again.body.duplicates_skipped, 2)
      const reworded = yield* server.request("POST", `${bank("dedup")}/memories`, {
        json: { items: [{ content: "the office coffee machine is on the THIRD floor" }] }
      })
      assert.strictEqual(reworded.body.memories_created, 0)
      const list = yield* server.request("GET", `${bank("dedup")}/memories/list`)
      assert.strictEqual(list.body.total, 2)
    }))

  it.effect("timestamps: null means now, 'unset' means timeless", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("times")}/memories`, {
        json: {
          items: [{ content: "Water boils at 100 degrees Celsius at sea level.", timestamp: "unset" }, {
            content: "I bought a new bike today.",
            timestamp: null
          }]
        }
      })
      const list = yield* server.request("GET", `${bank("times")}/memories/list`)
      const timeless = list.body.items.find((item: any) => item.text.includes("boils"))
      assert.strictEqual(timeless.mentioned_at, null)
      const now = list.body.items.find((item: any) => item.text.includes("bike"))
      assert.isBelow(Math.abs(Date.parse(now.mentioned_at) - Date.now()), 60_000)
    }))

  it.effect("documents: replace swaps changed content but keeps unchanged chunks; append adds; delete removes", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const v1 =
        "The project is called Falcon and the platform team runs it.\n\nFalcon ships in March after the security review."
      yield* server.request("PUT", bank("docs"), { json: { retain_chunk_size: 16 } })
      yield* server.request("POST", `${bank("docs")}/memories`, {
        json: { items: [{ content: v1, document_id: "plan", metadata: { owner: "ana" }, tags: ["roadmap"] }] }
      })
      const before = yield* server.request("GET", `${bank("docs")}/memories/list`)
      assert.strictEqual(before.body.total, 2)
      const kept = before.body.items.find((item: any) => item.text.includes("called Falcon"))

      const v2 =
        "The project is called Falcon and the platform team runs it.\n\nFalcon ships in June after the security review."
      yield* server.request("POST", `${bank("docs")}/memories`, {
        json: { items: [{ content: v2, document_id: "plan" }] }
      })
      const after = yield* server.request("GET", `${bank("docs")}/memories/list`)
      const texts = after.body.items.map((item: any) => item.text)
      assert.strictEqual(after.body.total, 2)
      assert.isTrue(texts.some((text: string) => text.includes("June")))
      assert.isFalse(texts.some((text: string) => text.includes("March")))
      assert.isTrue(after.body.items.some((item: any) => item.id === kept.id), "unchanged chunk keeps its memory")

      yield* server.request("POST", `${bank("docs")}/memories`, {
        json: { items: [{ content: "Falcon needs two more engineers.", document_id: "plan", update_mode: "append" }] }
      })
      const document = yield* server.request("GET", `${bank("docs")}/documents/plan`)
      assert.strictEqual(document.status, 200)
      assert.strictEqual(document.body.memory_unit_count, 3)
      assert.include(document.body.original_text, "two more engineers")
      const documents = yield* server.request("GET", `${bank("docs")}/documents`)
      assert.strictEqual(documents.body.total, 1)
      assert.strictEqual(documents.body.items[0].document_id, "plan")

      const deleted = yield* server.request("DELETE", `${bank("docs")}/documents/plan`)
      assert.strictEqual(deleted.body.deleted_count, 3)
      const empty = yield* server.request("GET", `${bank("docs")}/memories/list`)
      assert.strictEqual(empty.body.total, 0)
      const missing = yield* server.request("GET", `${bank("docs")}/documents/plan`)
      assert.strictEqual(missing.status, 404)
    }))

  it.effect("tags are listed with counts and glob filters; deprecated document_tags apply to every item", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("tagged")}/memories`, {
        json: {
          items: [
            { content: "Alice likes green tea.", tags: ["user:alice", "prefs"] },
            { content: "Bob likes black coffee.", tags: ["user:bob", "prefs"] }
          ],
          document_tags: ["imported"]
        }
      })
      const all = yield* server.request("GET", `${bank("tagged")}/tags`)
      const counts = Object.fromEntries(all.body.items.map((item: any) => [item.tag, item.count]))
      assert.deepStrictEqual(counts, { prefs: 2, imported: 2, "user:alice": 1, "user:bob": 1 })
      const users = yield* server.request("GET", `${bank("tagged")}/tags?q=user:*`)
      assert.deepStrictEqual(users.body.items.map((item: any) => item.tag).sort(), ["user:alice", "user:bob"])
      assert.strictEqual(users.body.total, 2)
    }))

  it.effect("asynchronous retain returns a batch_retain operation split into sub-batches", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const items = Array.from({ length: 60 }, (_, index) => ({
        content: `Note number ${index}: the sensor in room ${index} reads ${20 + (index % 7)} degrees.`,
        metadata: { n: String(index) }
      }))
      const response = yield* server.request("POST", `${bank("async")}/memories`, { json: { items, async: true } })
      assert.strictEqual(response.body.async, true)
      const id = response.body.operation_id
      assert.isString(id)
      const done = yield* eventually(
        server.request("GET", `${bank("async")}/operations/${id}`),
        (r) => r.body.status === "completed" || r.body.status === "failed"
      )
      assert.strictEqual(done.body.status, "completed", done.text)
      assert.strictEqual(done.body.task_type, "batch_retain")
      assert.strictEqual(done.body.items_count, 60)
      assert.strictEqual(done.body.child_operations.length, 3)
      const list = yield* server.request("GET", `${bank("async")}/memories/list?limit=1`)
      assert.strictEqual(list.body.total, 60)
    }))

  it.effect("clearing by type keeps the bank and its profile", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank("clear"), { json: { name: "Keep me" } })
      yield* server.request("POST", `${bank("clear")}/memories`, {
        json: {
          items: [{ content: "I ran five kilometres this morning." }, { content: "Rome is the capital of Italy." }]
        }
      })
      const cleared = yield* server.request("DELETE", `${bank("clear")}/memories?type=experience`)
      assert.strictEqual(cleared.body.deleted_count, 1)
      const left = yield* server.request("GET", `${bank("clear")}/memories/list`)
      assert.deepStrictEqual(left.body.items.map((item: any) => item.type), ["world"])
      const all = yield* server.request("DELETE", `${bank("clear")}/memories`)
      assert.strictEqual(all.body.deleted_count, 1)
      const profile = yield* server.request("GET", `${bank("clear")}/profile`)
      assert.strictEqual(profile.body.name, "Keep me")
      const badType = yield* server.request("DELETE", `${bank("clear")}/memories?type=dreams`)
      assert.strictEqual(badType.status, 400)
    }))
})

/**
 * Entity intelligence over the real HTTP server: 404 until computed, a recompute as a durable operation, the
 * offline report built from the bank's own entities (circles, connections, current states from trajectories),
 * the automatic recompute when a bank turns it on and its entity set grows, and the language-model document —
 * a full one first, then an edit of it — against the scripted OpenAI-compatible server with prompts asserted.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"
import { onePurpose, Scripted, scriptedApp, scriptedModels } from "../../support/ScriptedLlm.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

const retain = (id: string, sentences: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const items = sentences.map((content, index) => ({
      content,
      timestamp: new Date(Date.UTC(2024, 2, 1 + index, 9)).toISOString()
    }))
    const response = yield* request("POST", `${bank(id)}/memories`, { items })
    assert.strictEqual(response.status, 200, response.text)
  })

const finished = (id: string, operationId: string) =>
  eventually(
    request("GET", `${bank(id)}/operations/${operationId}/result`),
    (r) => r.body.status === "completed" || r.body.status === "failed"
  )

const recomputeIntelligence = (id: string) =>
  Effect.gen(function*() {
    const queued = yield* request("POST", `${bank(id)}/entity-intelligence/recompute`)
    assert.strictEqual(queued.status, 200, queued.text)
    assert.strictEqual(queued.body.status, "pending")
    const done = yield* finished(id, queued.body.operation_id)
    assert.strictEqual(done.body.status, "completed", done.text)
    return (yield* request("GET", `${bank(id)}/entity-intelligence`)).body
  })

const facts = [
  "Alice works at Acme Corp with Bob.",
  "Alice and Bob ship the Apollo release at Acme Corp.",
  "Alice meets Carol from Globex in London.",
  "Bob plans a trip to Paris with Dave.",
  "Alice mentors Erin at Acme Corp.",
  "Frank from Initech calls Alice about a contract."
]

const sectionIds = (document: any) => (document.sections as Array<any>).map((section) => section.id)

layer(testApp(), { excludeTestServices: true })("entity intelligence offline", (it) => {
  it.effect("404 until computed; the offline report maps the bank's entities, connections and states", () =>
    Effect.gen(function*() {
      yield* retain("map", facts)
      const before = yield* request("GET", `${bank("map")}/entity-intelligence`)
      assert.strictEqual(before.status, 404)
      assert.include(before.body.detail, "not computed")
      assert.strictEqual((yield* request("GET", `${bank("nobank")}/entity-intelligence`)).status, 404)

      const first = yield* recomputeIntelligence("map")
      const entities = yield* request("GET", `${bank("map")}/entities?limit=100`)
      assert.strictEqual(first.bank_id, "map")
      assert.strictEqual(first.source_entity_count, entities.body.total)
      assert.strictEqual(first.entity_count, entities.body.total)
      assert.lengthOf(first.entity_snapshot_hash, 32)
      assert.strictEqual(first.llm_model, "offline")
      assert.strictEqual(first.prompt_version, "offline-entity-map-v1")
      assert.include(first.delta_metadata, { mode: "offline" })
      assert.strictEqual(first.structured_content.version, 1)
      assert.includeMembers(sectionIds(first.structured_content), [
        "digital-person",
        "people-circles",
        "relationship-graph",
        "current-states"
      ])
      // The report speaks of this bank: its most mentioned entity and its strongest connection, with counts.
      assert.match(first.content, /^## Snapshot\n\nThis bank knows \d+ entities: \d+ people, /)
      assert.include(first.content, "The most mentioned are Alice (5 mentions)")
      assert.match(
        first.content,
        /- (Alice and Acme Corp|Acme Corp and Alice): named together in 3 facts, last on 2024-03-05/
      )
      assert.include(first.content, "No entity has a trajectory yet")
      const context = first.entity_context
      assert.strictEqual(context.entities[0].name, "Alice")
      assert.include(context.entities[0], { mentions: 5 })
      assert.isArray(context.entities[0].recent)

      // Once Alice has a trajectory, her current state and forecast appear in the map and the report.
      const alice = context.entities[0].id as string
      const queued = yield* request("POST", `${bank("map")}/entities/${alice}/trajectory/recompute`)
      yield* finished("map", queued.body.operation_id)
      const trajectory = (yield* request("GET", `${bank("map")}/entities/${alice}/trajectory`)).body
      const second = yield* recomputeIntelligence("map")
      assert.include(second.content, `- Alice: ${trajectory.current_state} (next: `)
      assert.strictEqual(second.entity_context.entities[0].state, trajectory.current_state)
      assert.notStrictEqual(second.entity_snapshot_hash, first.entity_snapshot_hash)
    }))

  it.effect("recomputes by itself once enabled and the bank holds enough entities", () =>
    Effect.gen(function*() {
      const bad = yield* request("PUT", bank("grow"), { enable_entity_intelligence: "sometimes" })
      assert.strictEqual(bad.status, 400)
      assert.include(bad.body.detail, "enable_entity_intelligence")
      const created = yield* request("PUT", bank("grow"), { enable_entity_intelligence: true })
      assert.strictEqual(created.status, 200, created.text)
      yield* retain("grow", facts)
      const computed = yield* eventually(request("GET", `${bank("grow")}/entity-intelligence`), (r) => r.status === 200)
      assert.isAtLeast(computed.body.source_entity_count, 8)
      const operations = yield* request("GET", `${bank("grow")}/operations?task_type=entity_intelligence_recompute`)
      assert.strictEqual(operations.body.operations.length, 1)
    }))
})

const llmModels = scriptedModels(onePurpose("reflect", "writer"))

const llmApp = scriptedApp({ operationMaxAttempts: 1, operationRetryBase: Duration.millis(5) }, llmModels)

const fullDocument = {
  version: 1,
  sections: [
    {
      id: "digital-person",
      heading: "Who this is",
      level: 2,
      blocks: [{ type: "paragraph", text: "Alice, an engineer at Acme Corp." }]
    },
    {
      id: "people-circles",
      heading: "People",
      level: 2,
      blocks: [{ type: "bullet_list", items: ["Bob: colleague", "Carol: contact"] }]
    }
  ]
}

layer(llmApp, { excludeTestServices: true })("entity intelligence with a language model", (it) => {
  it.effect("a full document from the entity map, then an edit of it that keeps the untouched sections", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      yield* retain("llm", facts)
      scripted.script({ content: JSON.stringify(fullDocument) })
      const full = yield* recomputeIntelligence("llm")
      assert.strictEqual(full.llm_model, "openai/writer")
      assert.strictEqual(full.prompt_version, "v1-entity-map")
      assert.include(full.delta_metadata, { mode: "full", delta_attempted: false })
      assert.deepStrictEqual(full.structured_content, fullDocument)
      assert.strictEqual(
        full.content,
        "## Who this is\n\nAlice, an engineer at Acme Corp.\n\n## People\n\n- Bob: colleague\n- Carol: contact\n"
      )
      const fullRequest = scripted.chatRequests().at(-1)!.body
      const [system, user] = fullRequest.messages as Array<{ content: string }>
      assert.include(system!.content, "Use only what the inventory says")
      assert.include(system!.content, "\"sections\"")
      assert.strictEqual(fullRequest.temperature, 0.25)
      assert.include(user!.content, "Suggested section ids, in order")
      const inventory = JSON.parse(user!.content.split("Inventory (JSON):\n")[1]!)
      assert.strictEqual(inventory.entities[0].name, "Alice")
      assert.strictEqual(inventory.map_version, "entity-map-v1")

      yield* retain("llm", ["Alice leaves Acme Corp to found Zenith Labs."])
      scripted.script({
        content: JSON.stringify({
          operations: [
            {
              op: "append_block",
              section_id: "digital-person",
              block: { type: "paragraph", text: "She now runs Zenith Labs." }
            },
            { op: "remove_section", id: "no-such-section" }
          ]
        })
      })
      const delta = yield* recomputeIntelligence("llm")
      assert.include(delta.delta_metadata, { mode: "delta", delta_attempted: true, delta_succeeded: true, applied: 1 })
      assert.deepStrictEqual(delta.delta_metadata.skipped, ["remove_section no-such-section: not found"])
      assert.strictEqual(
        delta.content,
        "## Who this is\n\nAlice, an engineer at Acme Corp.\n\nShe now runs Zenith Labs.\n\n## People\n\n- Bob: colleague\n- Carol: contact\n"
      )
      const deltaMessages = scripted.chatRequests().at(-1)!.body.messages as Array<{ content: string }>
      assert.include(deltaMessages[0]!.content, "{\"operations\": [...]}")
      assert.include(deltaMessages[1]!.content, `Current document (JSON):\n${JSON.stringify(fullDocument)}`)
      assert.include(deltaMessages[1]!.content, "Zenith Labs")
    }))
})

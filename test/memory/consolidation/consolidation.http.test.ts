/**
 * Consolidation over HTTP with the offline pipeline (no language model): retain queues a consolidation that
 * files facts per subject and topic into compact observations with their sources; recall finds them with their
 * source facts; runs are delta-aware and deduplicated; history, resets, clearing, regeneration after a change of
 * the rules, scopes, deleted sources, the tenant-wide trigger, the completion event and bad input.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { EngramConfig } from "../../../src/config/EngramConfig.ts"
import type { BankEvent } from "../../../src/events/BankEvents.ts"
import { BankEvents } from "../../../src/events/BankEvents.ts"
import { MemoryUnits } from "../../../src/memory/MemoryUnits.ts"
import { Operations } from "../../../src/bank/Operations.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../../support/TestTasks.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const turns = (session: number, date: string, lines: ReadonlyArray<readonly [string, string]>) =>
  lines.map(([speaker, text], index) => ({
    content: `${speaker}: ${text}`,
    timestamp: date,
    metadata: { dia_id: `D${session}:${index + 1}` }
  }))

const session1 = turns(1, "2023-05-08T13:56:00Z", [
  ["Caroline", "Hey Mel! Good to see you! How have you been?"],
  ["Melanie", "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?"],
  ["Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."],
  ["Melanie", "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any inspiring stories?"],
  ["Caroline", "The support group has made me feel accepted and given me courage to embrace myself."],
  ["Melanie", "Yeah, I painted that lake sunrise last year! It's special to me."],
  ["Melanie", "Thanks, Caroline! Painting's a fun way to express my feelings and get creative."]
])
const session2 = turns(2, "2023-05-25T13:14:00Z", [
  ["Caroline", "I went to the support group again last night, we talked about coming out to family."],
  ["Melanie", "I took the kids to the museum yesterday, they loved the dinosaur exhibit."],
  ["Melanie", "I finished another painting of a sunset over the lake this weekend."],
  ["Caroline", "Thanks! See you soon!"]
])

const events: Array<BankEvent> = []
const captureEvents = BankEvents.listener(
  Effect.succeed((event: BankEvent) => Effect.sync(() => void events.push(event)))
)

const app = testApp({ enableObservations: true }, Layer.mergeAll(TestTaskHandlers, captureEvents))

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

/** Waits until the bank has no queued work and no fact waiting for consolidation. */
const settled = (id: string) =>
  eventually(
    request("GET", `${bank(id)}/stats`),
    (r) => r.body.pending_consolidation === 0 && r.body.pending_operations === 0
  )

const retain = (id: string, items: ReadonlyArray<unknown>) =>
  Effect.tap(
    request("POST", `${bank(id)}/memories`, { items }),
    (r) => Effect.sync(() => assert.strictEqual(r.status, 200, r.text))
  )

const observations = (id: string) =>
  Effect.map(request("GET", `${bank(id)}/memories/list?type=observation&limit=1000`), (r) => r.body.items as Array<any>)

const facts = (id: string) =>
  Effect.map(
    request("GET", `${bank(id)}/memories/list?limit=1000`),
    (r) => (r.body.items as Array<any>).filter((item) => item.type !== "observation")
  )

const finished = (id: string, operationId: string) =>
  eventually(
    request("GET", `${bank(id)}/operations/${operationId}/result`),
    (r) => r.body.status === "completed" || r.body.status === "failed"
  )

/**
 * The two chat sessions retained into a bank of the caller's own, each consolidated: every test that reads or
 * changes their observations builds its own, so it runs alone and sees nothing another test did.
 */
const twoSessions = (id: string) =>
  Effect.gen(function*() {
    yield* retain(id, session1)
    yield* settled(id)
    yield* retain(id, session2)
    return yield* settled(id)
  })

layer(app, { excludeTestServices: true })("consolidation (offline)", (it) => {
  it.effect("retain queues a consolidation that files facts per subject and topic into compact observations", () =>
    Effect.gen(function*() {
      const stats = yield* twoSessions("chat")
      const stored = yield* facts("chat")
      const found = yield* observations("chat")
      assert.strictEqual(stats.body.total_observations, found.length)
      assert.isNotNull(stats.body.last_consolidated_at)
      assert.isAbove(found.length, 2)
      assert.isBelow(found.length, stored.length, "observations summarise: fewer of them than facts")

      const operations = yield* request("GET", `${bank("chat")}/operations?task_type=consolidate`)
      assert.strictEqual(operations.body.operations.length, 2, "one consolidation per retain")

      for (const observation of found) {
        assert.match(observation.text, /^(Caroline|Melanie) — /)
        assert.notInclude(observation.text, "?", "questions are not knowledge")
        assert.notMatch(observation.text, /good to see you|see you soon/i, "greetings are not knowledge")
        assert.isAtLeast(observation.source_fact_ids.length, 1)
        for (const id of observation.source_fact_ids) assert.isTrue(stored.some((fact) => fact.id === id))
      }
      // Both support-group turns of two sessions are one observation, in the order they happened, with dates.
      const group = found.find((observation) => observation.text.startsWith("Caroline — support group"))
      assert.isDefined(group, found.map((o) => o.text).join("\n"))
      assert.include(group.text, "went to a LGBTQ support group yesterday (7 May 2023)")
      assert.include(group.text, "Caroline feel accepted", "first person is rewritten to the subject")
      assert.isBelow(group.text.indexOf("7 May 2023"), group.text.indexOf("24 May 2023"))
      assert.strictEqual(group.source_fact_ids.length, 3)
      assert.deepStrictEqual(group.entities.includes("Caroline"), true)
      assert.strictEqual(group.occurred_start, "2023-05-07T00:00:00.000Z")

      const completed = events.filter((event) => event.type === "consolidation.completed" && event.bankId === "chat")
      assert.strictEqual(completed.length, 2)
      assert.strictEqual(completed[0]!.data["trigger"], "retain")
      assert.isAbove(completed[0]!.data["observations_created"] as number, 0)
      assert.isAbove(completed[1]!.data["observations_updated"] as number, 0, "the second session extends observations")
      assert.strictEqual(completed[1]!.data["operation_id"], operations.body.operations[0].id)
    }))

  it.effect("recall with types [observation] returns observations with their source facts; entities list them", () =>
    Effect.gen(function*() {
      yield* twoSessions("chat-recall")
      const recalled = yield* request("POST", `${bank("chat-recall")}/memories/recall`, {
        query: "Caroline support group",
        types: ["observation"],
        include: { source_facts: {} }
      })
      assert.strictEqual(recalled.status, 200, recalled.text)
      const top = recalled.body.results[0]
      assert.strictEqual(top.type, "observation")
      assert.include(top.text, "support group")
      assert.strictEqual(top.source_fact_ids.length, 3)
      for (const id of top.source_fact_ids) assert.include(recalled.body.source_facts[id].text, "Caroline:")
      assert.isTrue(recalled.body.results.every((result: any) => result.type === "observation"))

      const entities = yield* request("GET", `${bank("chat-recall")}/entities`)
      const caroline = entities.body.items.find((entity: any) => entity.canonical_name === "Caroline")
      const detail = yield* request("GET", `${bank("chat-recall")}/entities/${caroline.id}`)
      assert.isTrue(detail.body.observations.some((o: any) => o.text.startsWith("Caroline — support group")))
    }))

  it.effect("history shows each change with the facts it added; a fact lists the observations resting on it", () =>
    Effect.gen(function*() {
      yield* twoSessions("chat-history")
      const group = (yield* observations("chat-history")).find((o) => o.text.startsWith("Caroline — support group"))
      const history = yield* request("GET", `${bank("chat-history")}/memories/${group.id}/history`)
      assert.strictEqual(history.status, 200, history.text)
      assert.strictEqual(history.body.fact_type, "observation")
      assert.deepStrictEqual(history.body.history.map((entry: any) => [entry.version, entry.change]), [[1, "created"], [
        2,
        "updated"
      ]])
      const [created, updated] = history.body.history
      assert.strictEqual(created.new_facts.length, 2)
      assert.include(updated.new_facts[0].text, "support group again last night")
      assert.strictEqual(updated.previous_text, created.text)
      assert.strictEqual(history.body.source_facts.length, 3)
      assert.isTrue(history.body.source_facts.every((fact: any) => typeof fact.text === "string"))

      const fact = yield* request("GET", `${bank("chat-history")}/memories/${group.source_fact_ids[0]}/history`)
      assert.deepStrictEqual(fact.body.observations.map((o: any) => o.id), [group.id])
      assert.deepStrictEqual(fact.body.history, [])
      const unknown = yield* request("GET", `${bank("chat-history")}/memories/nope/history`)
      assert.strictEqual(unknown.status, 404)
      assert.include(unknown.body.detail, "nope")
    }))

  it.effect("a consolidation is delta-aware and a waiting one is reused", () =>
    Effect.gen(function*() {
      yield* twoSessions("chat-delta")
      const operations = yield* Operations
      const before = yield* observations("chat-delta")
      // Hold the bank's worker so the requests below find the first one still waiting.
      const blocker = yield* operations.submit({
        bankId: "chat-delta",
        taskType: "test_block",
        payload: { key: "hold-chat-delta" }
      })
      yield* eventually(request("GET", `${bank("chat-delta")}/operations/${blocker.id}`), (r) =>
        r.body.status === "running")
      const first = yield* request("POST", `${bank("chat-delta")}/consolidate`)
      const second = yield* request("POST", `${bank("chat-delta")}/consolidate`)
      assert.strictEqual(first.status, 200, first.text)
      assert.deepStrictEqual([first.body.deduplicated, second.body.deduplicated], [false, true])
      assert.strictEqual(second.body.operation_id, first.body.operation_id)
      yield* Deferred.succeed(TestTasks.blockers.get("hold-chat-delta")!, undefined)
      const result = yield* finished("chat-delta", first.body.operation_id)
      assert.strictEqual(result.body.result.facts_processed, 0, "nothing new to consolidate")
      assert.strictEqual(result.body.result.trigger, "manual")
      const after = yield* observations("chat-delta")
      assert.deepStrictEqual(after.map((o) => [o.id, o.text]).sort(), before.map((o) => [o.id, o.text]).sort())
    }))

  it.effect("resetting one fact's observations rebuilds them; clearing all leaves the facts waiting", () =>
    Effect.gen(function*() {
      yield* twoSessions("chat-reset")
      const group = (yield* observations("chat-reset")).find((o) => o.text.startsWith("Caroline — support group"))
      const reset = yield* request("DELETE", `${bank("chat-reset")}/memories/${group.source_fact_ids[1]}/observations`)
      assert.strictEqual(reset.status, 200, reset.text)
      assert.strictEqual(reset.body.deleted_count, 1)
      yield* finished("chat-reset", reset.body.operation_id)
      const rebuilt = (yield* observations("chat-reset")).find((o) => o.text.startsWith("Caroline — support group"))
      assert.notStrictEqual(rebuilt.id, group.id)
      assert.strictEqual(rebuilt.text, group.text)
      assert.sameMembers(rebuilt.source_fact_ids, group.source_fact_ids)
      const gone = yield* request("GET", `${bank("chat-reset")}/memories/${group.id}/history`)
      assert.strictEqual(gone.status, 404)

      const onObservation = yield* request("DELETE", `${bank("chat-reset")}/memories/${rebuilt.id}/observations`)
      assert.strictEqual(onObservation.status, 400)
      assert.deepStrictEqual(onObservation.body.errors.map((e: any) => e.field), ["memory_id"])
      const unknown = yield* request("DELETE", `${bank("chat-reset")}/memories/nope/observations`)
      assert.strictEqual(unknown.status, 404)

      const count = (yield* observations("chat-reset")).length
      const cleared = yield* request("DELETE", `${bank("chat-reset")}/observations`)
      assert.strictEqual(cleared.status, 200, cleared.text)
      assert.strictEqual(cleared.body.deleted_count, count)
      const stats = yield* request("GET", `${bank("chat-reset")}/stats`)
      assert.strictEqual(stats.body.total_observations, 0)
      assert.strictEqual(stats.body.pending_consolidation, (yield* facts("chat-reset")).length)
      const again = yield* request("POST", `${bank("chat-reset")}/consolidate`)
      yield* finished("chat-reset", again.body.operation_id)
      assert.strictEqual((yield* observations("chat-reset")).length, count, "the same facts give the same observations")
    }))

  it.effect("a change of the rules regenerates observations; other settings do not", () =>
    Effect.gen(function*() {
      yield* twoSessions("chat-rules")
      yield* request("PATCH", bank("chat-rules"), { name: "Friends" })
      const untouched = yield* request("GET", `${bank("chat-rules")}/operations?task_type=regenerate_observations`)
      assert.strictEqual(untouched.body.operations.length, 0)
      const patched = yield* request("PATCH", bank("chat-rules"), {
        observations_mission: "Keep track of family and art."
      })
      assert.strictEqual(patched.status, 200)
      const queued = yield* request("GET", `${bank("chat-rules")}/operations?task_type=regenerate_observations`)
      assert.strictEqual(queued.body.operations.length, 1)
      const result = yield* finished("chat-rules", queued.body.operations[0].id)
      assert.strictEqual(result.body.status, "completed")
      assert.isAbove(result.body.result.observations_removed, 0)
      // Offline, the mission steers the topics: the family talk is now filed under "family".
      const found = yield* observations("chat-rules")
      assert.isTrue(found.some((o) => o.text.startsWith("Caroline — family")), found.map((o) => o.text).join("\n"))
      const disposition = yield* request("PATCH", bank("chat-rules"), { disposition_skepticism: 5 })
      assert.strictEqual(disposition.status, 200)
      const again = yield* request("GET", `${bank("chat-rules")}/operations?task_type=regenerate_observations`)
      assert.strictEqual(again.body.operations.length, 2)
      yield* settled("chat-rules")
    }))

  it.effect("with observations off retain queues nothing; asking still consolidates; turning them on catches up", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("quiet"), { enable_observations: false })
      yield* retain("quiet", session2)
      const stats = yield* request("GET", `${bank("quiet")}/stats`)
      assert.isAbove(stats.body.pending_consolidation, 0)
      const none = yield* request("GET", `${bank("quiet")}/operations?task_type=consolidate`)
      assert.strictEqual(none.body.operations.length, 0)
      const enabled = yield* request("PATCH", bank("quiet"), { enable_observations: true })
      assert.strictEqual(enabled.status, 200)
      const queued = yield* request("GET", `${bank("quiet")}/operations?task_type=consolidate`)
      assert.strictEqual(queued.body.operations.length, 1)
      yield* settled("quiet")
      assert.isAbove((yield* observations("quiet")).length, 0)
    }))

  it.effect("observation scopes: combined by default, per tag, all combinations, custom lists", () =>
    Effect.gen(function*() {
      const item = (text: string, scopes?: unknown) => ({
        content: `Melanie: ${text}`,
        timestamp: "2023-06-01T10:00:00Z",
        tags: ["family", "art"],
        ...(scopes === undefined ? {} : { observation_scopes: scopes })
      })
      yield* retain("scoped", [
        item("I painted a portrait of my grandmother for her birthday."),
        item("I started a pottery class with my sister on Tuesdays.", "per_tag"),
        item("I framed the watercolor landscape for the hallway.", "all_combinations"),
        item("I sold three paintings at the summer art fair.", [["market"]])
      ])
      yield* settled("scoped")
      const scopes = new Set((yield* observations("scoped")).map((o) => JSON.stringify(o.tags)))
      assert.sameMembers([...scopes], [
        JSON.stringify(["art"]),
        JSON.stringify(["art", "family"]),
        JSON.stringify(["family"]),
        JSON.stringify(["market"])
      ])
      const market = yield* request("POST", `${bank("scoped")}/memories/recall`, {
        query: "paintings sold at the fair",
        types: ["observation"],
        tags: ["market"],
        tags_match: "all_strict"
      })
      assert.strictEqual(market.body.results.length, 1)
      assert.include(market.body.results[0].text, "three paintings")
    }))

  it.effect("when a source fact is deleted its observation is rebuilt from the facts that remain", () =>
    Effect.gen(function*() {
      const turn = (text: string, document?: string) => ({
        content: `Melanie: ${text}`,
        timestamp: "2023-07-01T10:00:00Z",
        ...(document === undefined ? {} : { document_id: document })
      })
      yield* retain("sources", [turn("I painted the harbour at dawn with oil paints.", "sketchbook")])
      yield* retain("sources", [turn("My latest painting of the harbour shows boats in fog.")])
      yield* settled("sources")
      const before = (yield* observations("sources")).find((o) => o.text.includes("harbour"))
      assert.strictEqual(before.source_fact_ids.length, 2, before.text)
      const deleted = yield* request("DELETE", `${bank("sources")}/documents/sketchbook`)
      assert.strictEqual(deleted.status, 200, deleted.text)
      // The observation resting on a deleted fact goes with it; recall never cites a fact that is gone.
      assert.isUndefined((yield* observations("sources")).find((o) => o.id === before.id))
      // ...and the deletion queued the run that rebuilds it from the facts that remain.
      yield* settled("sources")
      const after = (yield* observations("sources")).find((o) => o.text.includes("harbour"))
      assert.strictEqual(after.source_fact_ids.length, 1)
      assert.notInclude(after.text, "dawn")

      // Deleting that last fact (MCP's delete_memory calls this) leaves nothing to rebuild from.
      const units = yield* MemoryUnits
      yield* units.remove("sources", after.source_fact_ids[0])
      yield* settled("sources")
      assert.isUndefined((yield* observations("sources")).find((o) => o.text.includes("harbour")))
    }))

  it.effect("an explicit consolidate that joins a waiting automatic run makes it run even with observations off", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      yield* request("PUT", bank("toggle"), {})
      const blocker = yield* operations.submit({
        bankId: "toggle",
        taskType: "test_block",
        payload: { key: "hold-toggle" }
      })
      yield* eventually(
        request("GET", `${bank("toggle")}/operations/${blocker.id}`),
        (r) => r.body.status === "running"
      )
      yield* retain("toggle", session2)
      const off = yield* request("PATCH", bank("toggle"), { enable_observations: false })
      assert.strictEqual(off.status, 200, off.text)
      const asked = yield* request("POST", `${bank("toggle")}/consolidate`)
      assert.strictEqual(asked.body.deduplicated, true, "joins the run retain queued")
      yield* Deferred.succeed(TestTasks.blockers.get("hold-toggle")!, undefined)
      const result = yield* finished("toggle", asked.body.operation_id)
      assert.strictEqual(result.body.result.trigger, "manual")
      assert.isUndefined(result.body.result.skipped)
      assert.isAbove(result.body.result.facts_processed, 0)
    }))

  it.effect("the admin route consolidates every bank of this instance's schema; bad input answers 400 or 404", () =>
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const all = yield* request("GET", "/v1/default/banks")
      const admin = yield* request("POST", `/v1/admin/consolidate/${config.databaseSchema}`)
      assert.strictEqual(admin.status, 200, admin.text)
      assert.strictEqual(admin.body.schema, config.databaseSchema)
      assert.strictEqual(admin.body.total_banks, all.body.banks.length)
      assert.sameMembers(admin.body.banks.map((b: any) => b.bank_id), all.body.banks.map((b: any) => b.bank_id))
      for (const entry of admin.body.banks) yield* finished(entry.bank_id, entry.operation_id)

      const unknownSchema = yield* request("POST", "/v1/admin/consolidate/no_such_tenant")
      assert.strictEqual(unknownSchema.status, 404)
      assert.include(unknownSchema.body.detail, "no_such_tenant")
      const badSchema = yield* request("POST", "/v1/admin/consolidate/bad-schema!")
      assert.strictEqual(badSchema.status, 400)
      assert.deepStrictEqual(badSchema.body.errors.map((e: any) => e.field), ["schema"])
      const unknownBank = yield* request("POST", `${bank("nobody")}/consolidate`)
      assert.strictEqual(unknownBank.status, 404)
      const badBank = yield* request("POST", `${bank("-bad")}/consolidate`)
      assert.strictEqual(badBank.status, 400)
      assert.deepStrictEqual(badBank.body.errors.map((e: any) => e.field), ["bank_id"])
      const clearUnknown = yield* request("DELETE", `${bank("nobody")}/observations`)
      assert.strictEqual(clearUnknown.status, 404)
    }))

  it.effect("recall's entity include lists the results' entities by mentions, each with its latest observations, within max_tokens", () =>
    Effect.gen(function*() {
      yield* retain("entity-include", [...session1, ...session2])
      yield* settled("entity-include")
      const ask = (maxTokens: number) =>
        request("POST", `${bank("entity-include")}/memories/recall`, {
          query: "What did Caroline talk about at the support group?",
          include: { entities: { max_tokens: maxTokens } }
        })
      const full = yield* ask(4000)
      assert.strictEqual(full.status, 200, full.text)
      const mentions = new Map<string, number>()
      for (const result of full.body.results) {
        for (const name of result.entities) mentions.set(name, (mentions.get(name) ?? 0) + 1)
      }
      const expected = [...mentions.keys()].sort((x, y) => mentions.get(y)! - mentions.get(x)! || (x < y ? -1 : 1))
      assert.isAbove(expected.length, 1)
      assert.deepStrictEqual(Object.keys(full.body.entities), expected)
      const caroline = full.body.entities["Caroline"]
      const stored = yield* observations("entity-include")
      const aboutCaroline = stored.filter((o) => o.entities.includes("Caroline"))
      assert.isAbove(aboutCaroline.length, 0)
      assert.strictEqual(caroline.canonical_name, "Caroline")
      assert.match(caroline.entity_id, /^[0-9a-f-]{36}$/)
      assert.sameMembers(caroline.observations.map((o: any) => o.text), aboutCaroline.map((o) => o.text))
      const times = caroline.observations.map((o: any) => Date.parse(o.mentioned_at))
      assert.deepStrictEqual(times, [...times].sort((a, b) => b - a))

      // A tight budget keeps the most mentioned entities first and cuts the rest.
      const tight = yield* ask(12)
      const kept = Object.keys(tight.body.entities)
      assert.isAbove(kept.length, 0)
      assert.isBelow(kept.length, expected.length)
      assert.deepStrictEqual(kept, expected.slice(0, kept.length))
    }))
})

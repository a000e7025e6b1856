/**
 * A removal that deletes an entity's trajectory (its path ran through a removed memory) queues its recompute with the
 * removal, over the real HTTP server on both tiers: once the bank's operations are done, the trajectory reads again,
 * without the removed memory, after an invalidation (and with it again after its restore) and after a document
 * retained again in replace mode. Before,
 * it answered 404 until the next run over stale entities (a later retain in a bank with automatic trajectories on).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"

const aliceFacts = [
  "Alice studies chemistry at Oxford University.",
  "Alice passed her chemistry exams at Oxford University.",
  "Alice wrote her chemistry thesis at Oxford University.",
  "Alice joined Acme Corp as a software engineer.",
  "Alice leads the software engineering team at Acme Corp.",
  "Alice was promoted to director of software engineering at Acme Corp."
]

const aliceId = (bank: string) =>
  Effect.gen(function*() {
    const list = yield* ok("GET", `${bankPath(bank)}/entities?limit=100`)
    const entity = (list.body.items as Array<{ id: string; canonical_name: string }>).find((item) =>
      item.canonical_name === "Alice"
    )
    assert.isDefined(entity, list.text)
    return entity!.id
  })

/** The trajectory's path as the read shows it: the ids of the facts it runs through. */
const pathOf = (bank: string, entity: string) =>
  Effect.gen(function*() {
    const read = yield* call("GET", `${bankPath(bank)}/entities/${entity}/trajectory`)
    assert.strictEqual(read.status, 200, `the trajectory reads: ${read.text}`)
    return (read.body.viterbi_path as Array<{ unit_id: string }>).map((step) => step.unit_id)
  })

const computed = (bank: string, entity: string) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/entities/${entity}/trajectory/recompute`)
    yield* settled(bank)
    return yield* pathOf(bank, entity)
  })

/** Alice's six facts retained a day apart, and her trajectory computed: its path runs through all six. */
const aliceWithTrajectory = (bank: string) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/memories`, {
      items: aliceFacts.map((content, day) => ({
        content,
        timestamp: new Date(Date.UTC(2024, 0, 1 + day, 9)).toISOString()
      }))
    })
    yield* settled(bank)
    const alice = yield* aliceId(bank)
    return { alice, before: yield* computed(bank, alice) }
  })

layer(testApp(), { excludeTestServices: true, timeout: "4 minutes" })(
  "a removal rebuilds the trajectories it removed",
  (it) => {
    it.effect("after an invalidation the trajectory reads again without the memory", () =>
      Effect.gen(function*() {
        const bank = "trajectory-invalidated"
        const { alice, before } = yield* aliceWithTrajectory(bank)
        assert.lengthOf(before, 6)

        const gone = before[2]!
        yield* ok("PATCH", `${bankPath(bank)}/memories/${gone}`, { state: "invalidated", reason: "a mix-up" })
        yield* settled(bank)
        const after = yield* pathOf(bank, alice)
        assert.sameMembers(after, before.filter((id) => id !== gone))

        // Restored: the trajectory runs through it again.
        yield* ok("PATCH", `${bankPath(bank)}/memories/${gone}`, { state: "valid" })
        yield* settled(bank)
        assert.sameMembers(yield* pathOf(bank, alice), before)
      }))

    it.effect("after a document retained again in replace mode the trajectory runs over its new fact", () =>
      Effect.gen(function*() {
        const bank = "trajectory-replaced"
        const base = bankPath(bank)
        yield* ok("POST", `${base}/memories`, {
          items: [
            ...aliceFacts.slice(0, 5).map((content, day) => ({
              content,
              timestamp: new Date(Date.UTC(2024, 0, 1 + day, 9)).toISOString()
            })),
            { content: aliceFacts[5], document_id: "cv", timestamp: "2024-01-09T09:00:00Z" }
          ]
        })
        yield* settled(bank)
        const alice = yield* aliceId(bank)
        const before = yield* computed(bank, alice)
        assert.lengthOf(before, 6)

        yield* ok("POST", `${base}/memories`, {
          items: [{
            content: "Alice moved to Lisbon with Acme Corp.",
            document_id: "cv",
            timestamp: "2024-01-10T09:00:00Z"
          }]
        })
        yield* settled(bank)
        const after = yield* pathOf(bank, alice)
        const live = (yield* ok("GET", `${base}/memories/list?limit=100`)).body.items as Array<
          { id: string; text: string }
        >
        const lisbon = live.find((memory) => memory.text.includes("Lisbon"))
        const promoted = before.find((id) => !live.some((memory) => memory.id === id))
        assert.isDefined(lisbon, "the document's new fact is stored")
        assert.isDefined(promoted, "the document's old fact was replaced")
        assert.sameMembers(after, [...before.filter((id) => id !== promoted), lisbon!.id])
      }))

    it.effect("after a forget of one memory the trajectory reads again without it", () =>
      Effect.gen(function*() {
        const bank = "trajectory-forgotten"
        const { alice, before } = yield* aliceWithTrajectory(bank)
        const gone = before[4]!
        const report = yield* ok("POST", `${bankPath(bank)}/forget`, { memory_ids: [gone] })
        assert.strictEqual(report.body.removed.trajectories, 1, report.text)
        yield* settled(bank)
        assert.sameMembers(yield* pathOf(bank, alice), before.filter((id) => id !== gone))
      }))
  }
)

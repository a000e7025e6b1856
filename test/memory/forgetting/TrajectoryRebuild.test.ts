/**
 * A removal that deletes an entity's trajectory (its path ran through a removed memory) queues its recompute with the
 * removal, over the real HTTP server on both tiers: once the bank's operations are done, the trajectory reads again,
 * without the removed memory, after an invalidation (and with it again after its restore) and after a document
 * retained again in replace mode. Before, it answered 404 until the next run over stale entities (a later retain in
 * a bank with automatic trajectories on). Removals made while a recompute is still waiting add their entities to it
 * (one operation, its entity set grown) rather than queueing one each.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Operations } from "../../../src/bank/Operations.ts"
import { changedFactsKey, makeEntityRequests, trajectoryTask } from "../../../src/entities/EntityRequests.ts"
import {
  computed,
  entityIdOf,
  factsAbout,
  pathOf,
  personWithTrajectory,
  trajectoryOperations
} from "../../support/EntityTrajectory.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../../support/TestTasks.ts"

const aliceWithTrajectory = (bank: string) =>
  Effect.map(personWithTrajectory(bank, "Alice"), ({ entity, before }) => ({ alice: entity, before }))

layer(testApp({}, TestTaskHandlers), { excludeTestServices: true, timeout: "4 minutes" })(
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

    it.effect("with automatic trajectories, a restore brings back the trajectory its invalidation dropped", () =>
      Effect.gen(function*() {
        const bank = "trajectory-dropped-restored"
        const { alice, before } = yield* aliceWithTrajectory(bank)
        yield* ok("PATCH", `${bankPath(bank)}/config`, {
          updates: { enable_entity_trajectories: true, entity_trajectory_min_facts: 6 }
        })
        const gone = before[3]!
        yield* ok("PATCH", `${bankPath(bank)}/memories/${gone}`, { state: "invalidated", reason: "a mix-up" })
        yield* settled(bank)
        // Five facts are below the minimum of six: the recompute the invalidation queued leaves it without one.
        const dropped = yield* call("GET", `${bankPath(bank)}/entities/${alice}/trajectory`)
        assert.strictEqual(dropped.status, 404, dropped.text)

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
            ...factsAbout("Alice").slice(0, 5).map((content, day) => ({
              content,
              timestamp: new Date(Date.UTC(2024, 0, 1 + day, 9)).toISOString()
            })),
            { content: factsAbout("Alice")[5], document_id: "cv", timestamp: "2024-01-09T09:00:00Z" }
          ]
        })
        yield* settled(bank)
        const alice = yield* entityIdOf(bank, "Alice")
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

    it.effect("removals while a recompute waits add their entities to it: one run rebuilds every trajectory", () =>
      Effect.gen(function*() {
        const operations = yield* Operations
        const sql = yield* SqlClient.SqlClient
        const bank = "trajectory-removals-absorbed"
        const base = bankPath(bank)
        const alice = yield* personWithTrajectory(bank, "Alice")
        const bob = yield* personWithTrajectory(bank, "Bob", { firstDay: 10, document: { at: 3, id: "bob-cv" } })
        const inDocument = (yield* sql<{ id: string }>`SELECT id FROM memory_units
          WHERE bank_id = ${bank} AND document_id = 'bob-cv'`.pipe(Effect.orDie))[0]!.id
        // The bank's worker is held, so what the removals queue is still waiting when the next one comes.
        const held =
          (yield* operations.submit({ bankId: bank, taskType: "test_block", payload: { key: "absorbed" } })).id
        yield* eventually(call("GET", `${base}/operations/${held}`), (r) => r.body.status === "running")
        const earlier = (yield* trajectoryOperations(bank)).length

        const forgotten = alice.before[1]!
        const report = yield* ok("POST", `${base}/forget`, { memory_ids: [forgotten] })
        assert.strictEqual(report.body.removed.trajectories, 1, report.text)
        yield* ok("DELETE", `${base}/documents/bob-cv`)

        const queued = (yield* trajectoryOperations(bank)).slice(earlier)
        assert.lengthOf(queued, 1, `one waiting recompute: ${JSON.stringify(queued)}`)
        assert.strictEqual(queued[0]!.status, "pending")
        assert.deepStrictEqual(queued[0]!.payload.entity_ids, [alice.entity, bob.entity])
        assert.strictEqual(queued[0]!.itemsCount, 2)

        yield* Deferred.succeed(TestTasks.blockers.get("absorbed")!, undefined)
        yield* settled(bank)
        assert.sameMembers(yield* pathOf(bank, alice.entity), alice.before.filter((id) => id !== forgotten))
        assert.sameMembers(yield* pathOf(bank, bob.entity), bob.before.filter((id) => id !== inDocument))
      }))

    it.effect("a recompute removals queued for many entities runs 200 at a time, each run queueing the rest", () =>
      Effect.gen(function*() {
        const bank = "trajectory-removals-split"
        yield* ok("POST", `${bankPath(bank)}/memories`, { items: [{ content: "Carol keeps bees in Porto." }] })
        yield* settled(bank)
        const requests = yield* makeEntityRequests
        // Entities a large sweep would hand over; these no longer exist, so each is skipped at once.
        const entityIds = Array.from({ length: 450 }, (_, i) => `swept-${String(i).padStart(3, "0")}`)
        yield* requests.request(bank, {
          taskType: trajectoryTask,
          dedupeKey: changedFactsKey,
          payload: { trigger: "sweep" },
          entityIds
        })
        yield* settled(bank)
        const runs = (yield* trajectoryOperations(bank)).filter((run) => run.payload.dedupe_key === changedFactsKey)
        assert.deepStrictEqual(runs.map((run) => run.status), ["completed", "completed", "completed"])
        assert.deepStrictEqual(runs.map((run) => run.result.entities.length), [200, 200, 50])
        const done = runs.flatMap((run) => run.result.entities.map((outcome: any) => outcome.entity_id))
        assert.deepStrictEqual(done, entityIds)
      }))
  }
)

/**
 * The expiry and retention sweeps rebuild the trajectories they drop, over the real HTTP server on both tiers: each
 * slice queues the recompute in its own transaction, so once the bank's operations are done the trajectory reads
 * again without the swept memory, or answers 404 saying why it has none (too few facts left). A sweep of several
 * slices queues one recompute whose entity set the later slices grow. Before, a swept trajectory answered 404 until
 * the next run over stale entities.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { pathOf, personWithTrajectory, trajectoryOperations } from "../../support/EntityTrajectory.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { factCount } from "../../support/DerivedState.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()

/** How many of the ids the bank still holds. */
const holding = (bank: string, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
      WHERE bank_id = ${bank} AND id IN ${sql.in([...ids])}`.pipe(Effect.orDie)
    return rows[0]!.n
  })

let reminders = 0

/**
 * The memories made expired (each group a minute after the one before, so the sweep takes them in that order), the
 * expiry scheduler woken by a retain that sets an expiry, and the bank settled once they are gone.
 */
const expire = (bank: string, groups: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const [index, ids] of groups.entries()) {
      const minutesAgo = groups.length - index
      yield* sql`UPDATE memory_units SET expires_at = now() - ${minutesAgo}::int * interval '1 minute'
        WHERE bank_id = ${bank} AND id IN ${sql.in([...ids])}`.pipe(Effect.orDie)
    }
    yield* ok("POST", `${bankPath(bank)}/memories`, {
      items: [{ content: `Reminder ${++reminders}: the fire drill is next Thursday.`, expires_at: inAnHour() }]
    })
    yield* eventually(holding(bank, groups.flat()), (n) => n === 0, Duration.seconds(60))
    yield* settled(bank)
  })

/** The entity's trajectory answers 404 saying it has `facts` facts, too few for one. */
const tooFewFacts = (bank: string, entity: string, facts: number) =>
  Effect.gen(function*() {
    const read = yield* call("GET", `${bankPath(bank)}/entities/${entity}/trajectory`)
    assert.strictEqual(read.status, 404, read.text)
    assert.include(read.body.detail, `it has ${facts} facts and a trajectory needs at least 3`, read.text)
    const last = (yield* trajectoryOperations(bank)).at(-1)!
    assert.strictEqual(last.status, "completed", "the swept trajectory was recomputed")
    assert.deepInclude(last.result.entities, {
      entity_id: entity,
      skipped: `the entity has ${facts} facts; a trajectory needs at least 3`
    })
  })

/** Sets the bank's count limit and waits until the retention sweep has evicted down to it and the bank settled. */
const limitTo = (bank: string, maxMemories: number) =>
  Effect.gen(function*() {
    yield* ok("PATCH", `${bankPath(bank)}/config`, { updates: { retention: { max_memories: maxMemories } } })
    yield* eventually(factCount(bank), (n) => n <= maxMemories, Duration.seconds(60))
    yield* settled(bank)
  })

layer(testApp(), { excludeTestServices: true, timeout: "5 minutes" })(
  "sweeps rebuild the trajectories they drop",
  (it) => {
    it.effect("after an expiry sweep the trajectory reads without the expired memory, or says why it has none", () =>
      Effect.gen(function*() {
        const bank = "trajectory-expiry"
        const alice = yield* personWithTrajectory(bank, "Alice")
        const gone = alice.before[2]!
        yield* expire(bank, [[gone]])
        assert.sameMembers(yield* pathOf(bank, alice.entity), alice.before.filter((id) => id !== gone))

        // Three more expire: two facts are left, too few for a trajectory, and the read says so.
        yield* expire(bank, [[alice.before[0]!, alice.before[1]!, alice.before[3]!]])
        yield* tooFewFacts(bank, alice.entity, 2)
      }))

    it.effect("after a retention sweep the trajectory reads without the evicted memory, or says why it has none", () =>
      Effect.gen(function*() {
        const bank = "trajectory-retention"
        const alice = yield* personWithTrajectory(bank, "Alice")
        assert.strictEqual(yield* factCount(bank), 6)
        yield* limitTo(bank, 5)
        const held = yield* Effect.forEach(
          alice.before,
          (id) => Effect.map(holding(bank, [id]), (n) => n > 0 ? id : "")
        )
        const kept = held.filter((id) => id !== "")
        assert.lengthOf(kept, 5, "one fact evicted")
        assert.sameMembers(yield* pathOf(bank, alice.entity), kept)

        yield* limitTo(bank, 2)
        yield* tooFewFacts(bank, alice.entity, 2)
      }))

    it.effect("a sweep of two slices queues one recompute, which the second slice's entities join", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const bank = "trajectory-slices"
        const alice = yield* personWithTrajectory(bank, "Alice")
        const bob = yield* personWithTrajectory(bank, "Bob", { firstDay: 10 })
        // Enough other memories that the sweep (200 a slice) takes Alice's fact in its first slice and Bob's in its
        // second.
        yield* ok("POST", `${bankPath(bank)}/memories`, {
          items: Array.from(
            { length: 200 },
            (_, i) => ({ content: `Shelf ${i + 1} of the archive room holds tax files.` })
          )
        })
        yield* settled(bank)
        const people = new Set([...alice.before, ...bob.before])
        const others =
          (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank}`.pipe(Effect.orDie))
            .map((row) => row.id).filter((id) => !people.has(id))
        assert.isAtLeast(others.length, 200, "the other memories fill a slice")
        const earlier = (yield* trajectoryOperations(bank)).length

        const aliceGone = alice.before[4]!
        const bobGone = bob.before[1]!
        yield* expire(bank, [[aliceGone], others, [bobGone]])

        const audited = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_logs
        WHERE bank_id = ${bank} AND action = 'memories.expiry_sweep'`.pipe(Effect.orDie)
        assert.isAtLeast(audited[0]!.n, 2, "the sweep took more than one slice")
        const queued = (yield* trajectoryOperations(bank)).slice(earlier)
        assert.lengthOf(queued, 1, `one recompute for the whole sweep: ${JSON.stringify(queued)}`)
        assert.deepStrictEqual(queued[0]!.payload.entity_ids, [alice.entity, bob.entity])
        assert.strictEqual(queued[0]!.status, "completed")
        assert.sameMembers(yield* pathOf(bank, alice.entity), alice.before.filter((id) => id !== aliceGone))
        assert.sameMembers(yield* pathOf(bank, bob.entity), bob.before.filter((id) => id !== bobGone))
      }))
  }
)

/**
 * Forgetting survives a SIGKILL: a forget and a retention sweep, each killed for real in the middle, leave every
 * memory either present with its derived state or gone with it. A forget is one transaction: after the restart the
 * entity's memories are all there with the entity, or none is and the entity is gone. A sweep commits slice by
 * slice: after the restart the recovered operation finishes, the bank holds exactly its limit, and no observation
 * rests on a memory that is gone, no entity is left that no memory names, no memory names an entity that is gone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { eventually } from "../support/Eventually.ts"
import { call, facts } from "../support/RepoKillFixtures.ts"
import { freshServiceEnv } from "../support/TestDatabase.ts"

const bank = "/v1/default/banks/killed-forgetting"
const name = "Zephyrine Okafor"
const about = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    content: `Zephyrine Okafor checked greenhouse ${i} and logged ${i * 3} seedlings there.`,
    entities: [{ text: name }]
  }))

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const memories = (url: string) =>
  Effect.gen(function*() {
    const items: Array<any> = []
    for (const type of ["world", "experience", "observation"]) {
      items.push(...(yield* call(url, "GET", `${bank}/memories/list?limit=1000&type=${type}`)).items)
    }
    return items
  })

/** Waits until the bank has no pending or running operation. */
const settled = (url: string) =>
  eventually(
    call(url, "GET", `${bank}/operations?limit=100`),
    (listed) => !listed.operations.some((op: any) => op.status === "pending" || op.status === "running"),
    "120 seconds",
    { what: "the bank settled", interval: "100 millis" }
  ).pipe(Effect.asVoid)

/** Every derived row names something that is there, and everything named is there. */
const consistent = (url: string) =>
  Effect.gen(function*() {
    const all = yield* memories(url)
    const ids = new Set(all.map((item) => item.id))
    for (const observation of all.filter((item) => item.fact_type === "observation")) {
      for (const source of observation.source_fact_ids ?? []) {
        assert.isTrue(ids.has(source), `observation ${observation.id} rests on ${source}, which is gone`)
      }
    }
    const entities = (yield* call(url, "GET", `${bank}/entities?limit=1000`)).items as Array<any>
    const named = new Set(all.flatMap((item) => (item.entities ?? []).map((entity: string) => entity.toLowerCase())))
    for (const entity of entities) {
      assert.isTrue(
        named.has(entity.canonical_name.toLowerCase()),
        `entity ${entity.canonical_name} is named by no memory`
      )
    }
    const listed = new Set(entities.map((entity) => entity.canonical_name.toLowerCase()))
    for (const entityName of named) assert.isTrue(listed.has(entityName), `a memory names ${entityName}, which is gone`)
    return all
  })

describe("forgetting under SIGKILL", () => {
  it.live(
    "a forget and a retention sweep killed midway leave each memory whole or gone",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, first, restart } = yield* startService(
          freshServiceEnv({ SERVICE_API_ENABLE_OBSERVATIONS: "true" })
        )

        yield* call(url, "PUT", bank, { name: "killed" })
        yield* call(url, "POST", `${bank}/memories`, { items: about(300) })
        yield* call(url, "POST", `${bank}/memories`, { items: facts("a", 150) })
        yield* settled(url)
        const zephyrine = (all: Array<any>) =>
          all.filter((item) => item.fact_type !== "observation" && item.text.includes("Zephyrine"))
        const before = zephyrine(yield* consistent(url))
        assert.strictEqual(before.length, 300)

        // A dry run does the forget's work and rolls it back: it times the forget the kill lands halfway through.
        const started = performance.now()
        const dry = yield* call(url, "POST", `${bank}/forget`, { entity: name, dry_run: true })
        const took = performance.now() - started
        assert.strictEqual(dry.removed.memories >= 300, true)
        const forget = fetch(`${url}${bank}/forget`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ entity: name })
        }).catch(() => undefined)
        yield* sleep(Math.max(5, took / 2))
        yield* killHard(first)
        yield* Effect.promise(() => forget)

        const second = yield* restart
        yield* settled(url)
        const afterForget = yield* consistent(url)
        const left = zephyrine(afterForget).length
        assert.isTrue(left === 0 || left === 300, `a forget killed midway left ${left} of 300 memories`)
        const entity = (yield* call(url, "GET", `${bank}/entities?limit=1000`)).items.some((item: any) =>
          item.canonical_name === name
        )
        assert.strictEqual(entity, left === 300, "the entity goes with its memories, and only with them")
        yield* Effect.logInfo(
          `forget took ${Math.round(took)} ms; killed at half: ${left === 0 ? "forget landed" : "rolled back"}`
        )

        // A retention sweep down to 40 facts (2 to 4 slices), queued by the config change and killed as soon as its first
        // slice is audited (committed), so the kill lands between or inside the later ones.
        // Whichever way the forget went, the bank gets enough facts for a sweep of several slices.
        yield* call(url, "POST", `${bank}/memories`, { items: facts("b", 300) })
        yield* settled(url)
        const factsNow = (yield* consistent(url)).filter((item) => item.fact_type !== "observation").length
        yield* call(url, "PATCH", `${bank}/config`, { updates: { retention: { max_memories: 40 } } })
        for (let attempt = 0; attempt < 3000; attempt++) {
          const audited = yield* call(url, "GET", `${bank}/audit-logs?action=memories.retention_sweep&limit=1`)
          if (audited.total > 0) break
          yield* sleep(10)
        }
        const killedAt = new Date()
        yield* killHard(second)

        yield* restart
        yield* settled(url)
        const afterSweep = yield* consistent(url)
        assert.strictEqual(afterSweep.filter((item) => item.fact_type !== "observation").length, 40)
        // The slices the killed process committed are audited before the kill; the recovered sweep did the rest.
        const slices = (yield* call(url, "GET", `${bank}/audit-logs?action=memories.retention_sweep&limit=100`))
          .items as Array<any>
        const beforeKill = slices.filter((entry) => new Date(entry.started_at) < killedAt).length
        yield* Effect.logInfo(
          `sweep from ${factsNow} facts to 40: ${beforeKill} of ${slices.length} slices committed before the kill`
        )
        const sweeps = (yield* call(url, "GET", `${bank}/operations?limit=100`)).operations
          .filter((op: any) => op.task_type === "retention_sweep")
        assert.isTrue(
          sweeps.length >= 1 && sweeps.every((op: any) => op.status === "completed"),
          JSON.stringify(sweeps)
        )
      })),
    480_000
  )
})

/**
 * A person's six facts, retained a day apart, and their trajectory computed, over the test server's HTTP API: the
 * set-up of the tests that remove some of those facts and read the trajectory again. Nothing here removes anything.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, call, ok, settled } from "./HttpCalls.ts"

/** Six facts about `name` (a job at each of two places), in the order they are retained. */
export const factsAbout = (name: string) => [
  `${name} studies chemistry at Oxford University.`,
  `${name} passed the chemistry exams at Oxford University.`,
  `${name} wrote a chemistry thesis at Oxford University.`,
  `${name} joined Acme Corp as a software engineer.`,
  `${name} leads the software engineering team at Acme Corp.`,
  `${name} was promoted to director of software engineering at Acme Corp.`
]

export const entityIdOf = (bank: string, name: string) =>
  Effect.gen(function*() {
    const list = yield* ok("GET", `${bankPath(bank)}/entities?limit=100`)
    const entity = (list.body.items as Array<{ id: string; canonical_name: string }>).find((item) =>
      item.canonical_name === name
    )
    assert.isDefined(entity, list.text)
    return entity!.id
  })

/** The trajectory's path as the read shows it: the ids of the facts it runs through. */
export const pathOf = (bank: string, entity: string) =>
  Effect.gen(function*() {
    const read = yield* call("GET", `${bankPath(bank)}/entities/${entity}/trajectory`)
    assert.strictEqual(read.status, 200, `the trajectory reads: ${read.text}`)
    return (read.body.viterbi_path as Array<{ unit_id: string }>).map((step) => step.unit_id)
  })

/** Asks for the entity's trajectory, waits for the bank to settle and reads the path. */
export const computed = (bank: string, entity: string) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/entities/${entity}/trajectory/recompute`)
    yield* settled(bank)
    return yield* pathOf(bank, entity)
  })

/**
 * `name`'s six facts retained a day apart from `firstDay` of January 2024 (the fact at `documentAt`, when given, as
 * the document `documentId`), and the trajectory computed: its path runs through all six.
 */
export const personWithTrajectory = (
  bank: string,
  name: string,
  options: { readonly firstDay?: number; readonly document?: { readonly at: number; readonly id: string } } = {}
) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/memories`, {
      items: factsAbout(name).map((content, day) => ({
        content,
        timestamp: new Date(Date.UTC(2024, 0, (options.firstDay ?? 1) + day, 9)).toISOString(),
        ...(options.document?.at === day ? { document_id: options.document.id } : {})
      }))
    })
    yield* settled(bank)
    const entity = yield* entityIdOf(bank, name)
    const before = yield* computed(bank, entity)
    assert.lengthOf(before, 6, `${name}'s trajectory runs through the six facts`)
    return { entity, before }
  })

/** The trajectory recomputes of the bank, oldest first, as stored (payload and status). */
export const trajectoryOperations = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string; status: string; payload: any; itemsCount: number; result: any }>`
      SELECT id, status, payload, items_count, result FROM operations
      WHERE bank_id = ${bank} AND task_type = 'entity_trajectory_recompute' ORDER BY created_at, id`.pipe(Effect.orDie)
  })

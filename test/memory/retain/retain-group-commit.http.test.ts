/**
 * Retains that arrive together share a transaction (`GroupCommit`), over the real HTTP server on both tiers: forty
 * one-item retains sent at once into one bank are all stored, each answer counts its own item (created, or a
 * duplicate of the same content sent by another request of the group), and the bank's memory inserts number far
 * fewer than the requests. A retain with a document, and one into another bank, are written as before, beside them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, settled } from "../../support/HttpCalls.ts"
import { Retain } from "../../../src/memory/retain/Retain.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "group-commit"
const other = "group-commit-other"
const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dan Ito", "Eve Marsh", "Finn Olsen", "Gina Park"]
const turn = (n: number) =>
  `${people[n % people.length]} booked room ${n} for the planning meeting on day ${n} of the quarter.`

layer(testApp({ enableObservations: false }), { excludeTestServices: true })(
  "retain group commit",
  (it) => {
    it.effect("forty retains at once are each stored and answered alone, in far fewer transactions", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const post = (bankId: string, items: ReadonlyArray<Record<string, unknown>>) =>
          server.request("POST", `${bankPath(bankId)}/memories`, { json: { items } })
        // The banks exist first: their creation is not what is measured.
        for (const id of [bank, other]) assert.strictEqual((yield* post(id, [{ content: turn(1000) }])).status, 200)
        yield* settled(bank)
        const before = yield* sql<{ n: number; seq: string }>`SELECT count(*)::int AS n, max(seq)::text AS seq
          FROM memory_units WHERE bank_id = ${bank}`

        const requests = [
          ...Array.from({ length: 38 }, (_, n) => post(bank, [{ content: turn(n) }])),
          // The same content twice in one group: stored once, the other answer counts it a duplicate.
          post(bank, [{ content: turn(7) }]),
          // A document is written on its own, beside the group.
          post(bank, [{ content: turn(500), document_id: "minutes" }]),
          post(other, [{ content: turn(600) }])
        ]
        const answers = yield* Effect.all(requests, { concurrency: "unbounded" })
        for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)

        const stored = yield* sql<{ text: string; documentId: string | null }>`SELECT text, document_id
          FROM memory_units WHERE bank_id = ${bank} AND seq > ${before[0]!.seq}::bigint`
        const texts = stored.map((row) => row.text)
        for (let n = 0; n < 38; n++) assert.include(texts, turn(n), `turn ${n} was stored`)
        assert.strictEqual(texts.filter((text) => text === turn(7)).length, 1, "the repeated turn is stored once")
        assert.include(texts, turn(500))
        // Each answer counts its own item: 39 one-item answers for the group, one of them a duplicate of turn 7.
        const groupAnswers = answers.slice(0, 39).map((answer) => answer.body)
        assert.strictEqual(groupAnswers.reduce((sum, body) => sum + body.memories_created, 0), 38)
        assert.strictEqual(groupAnswers.reduce((sum, body) => sum + body.duplicates_skipped, 0), 1)
        assert.strictEqual(answers[40]!.body.memories_created, 1, "the other bank's retain")

        // Far fewer transactions than requests: the memories of the group share `created_at` per transaction.
        const transactions = yield* sql<{ n: number }>`SELECT count(DISTINCT created_at)::int AS n FROM memory_units
          WHERE bank_id = ${bank} AND seq > ${before[0]!.seq}::bigint AND document_id IS NULL`
        assert.isBelow(transactions[0]!.n, 20, `39 retains written in ${transactions[0]!.n} transactions`)
      }))

    it.effect("a retain inside a caller's transaction stays in it, while others around it are grouped and stored", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const retain = yield* Retain
        const server = yield* TestServer
        const bankId = "group-commit-tx"
        assert.strictEqual(
          (yield* server.request("POST", `${bankPath(bankId)}/memories`, {
            json: { items: [{ content: turn(3000) }] }
          }))
            .status,
          200
        )
        // The caller's transaction retains one item and then rolls back, while plain retains arrive around it.
        const insideRolledBack = sql.withTransaction(
          Effect.andThen(retain.retainNow(bankId, { items: [{ content: turn(3001) }] }), Effect.fail("roll back"))
        ).pipe(Effect.flip)
        const around = Array.from(
          { length: 10 },
          (_, n) => retain.retainNow(bankId, { items: [{ content: turn(3100 + n) }] })
        )
        const [rolledBack] = yield* Effect.all([insideRolledBack, ...around], { concurrency: "unbounded" })
        assert.strictEqual(rolledBack, "roll back")
        const texts = (yield* sql<{ text: string }>`SELECT text FROM memory_units WHERE bank_id = ${bankId}`)
          .map((row) => row.text)
        assert.notInclude(texts, turn(3001), "the rolled-back retain left nothing")
        for (let n = 0; n < 10; n++) assert.include(texts, turn(3100 + n))
      }))
  }
)

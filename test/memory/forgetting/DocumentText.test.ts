/**
 * A document keeps one text for all its memories. When some of them go and others stay, the gone ones' part of that
 * text goes too, over the real HTTP server on both tiers: an appended item whose memories expire stops showing in
 * the document's `original_text` at its expiry (before any sweep), a reprocess does not bring it back as memories, and
 * the sweep rewrites the stored text without it; a forget of the entity one appended item names does the same at
 * once. The part a live memory came from stays.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, call, ok, operationFinished, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const lasting = "Marguerite Delacroix waters the office plants every Monday."
const secret = "Zephyrine Okafor keeps the spare office key under the blue flowerpot."

/** The document's text as a client reads it, and its content hash. */
const documentOf = (bank: string, documentId: string) =>
  Effect.map(
    ok("GET", `${bankPath(bank)}/documents/${documentId}`),
    (response) => response.body as { original_text: string; content_hash: string }
  )

const storedText = (bank: string, documentId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ originalText: string }>`SELECT original_text FROM documents
      WHERE bank_id = ${bank} AND document_id = ${documentId}`.pipe(Effect.orDie)
    return rows[0]?.originalText
  })

layer(testApp(), { excludeTestServices: true, timeout: "3 minutes" })(
  "a document's text after some memories go",
  (it) => {
    it.effect(
      "an expired appended part leaves the text at its expiry, stays out on reprocess, and the sweep drops it",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const bank = "document-text-expiry"
          const base = bankPath(bank)
          yield* ok("POST", `${base}/memories`, { items: [{ content: lasting, document_id: "mixed" }] })
          const expiresAt = Date.now() + 4_000
          yield* ok("POST", `${base}/memories`, {
            items: [{
              content: secret,
              document_id: "mixed",
              update_mode: "append",
              expires_at: new Date(expiresAt).toISOString()
            }]
          })
          yield* settled(bank)
          // The sweep is held off (an open sweep row, as if another runner were sweeping): the reads are checked first.
          // After `settled`, which waits for every open operation of the bank.
          const holdSweep = crypto.randomUUID()
          yield* sql`INSERT INTO operations (id, bank_id, task_type, status, payload)
          VALUES (${holdSweep}, ${bank}, 'expiry_sweep', 'running', '{}')`
          const before = yield* documentOf(bank, "mixed")
          assert.isBelow(Date.now(), expiresAt, "the read before the expiry finished before it (a slow machine?)")
          assert.include(before.original_text, "Zephyrine")
          assert.include(before.original_text, "Marguerite")

          yield* Effect.sleep(Math.max(0, expiresAt - Date.now()) + 100)
          const after = yield* documentOf(bank, "mixed")
          assert.notInclude(after.original_text, "Zephyrine", "the expired part is still in the document's text")
          assert.include(after.original_text, lasting, "the live memory's part is kept")
          assert.notStrictEqual(after.content_hash, before.content_hash)
          assert.include(yield* storedText(bank, "mixed"), "Zephyrine", "nothing was swept yet: the read hid it")

          // A reprocess extracts the text as reads show it: the expired part does not come back as memories.
          const reprocess = yield* ok("POST", `${base}/documents/mixed/reprocess`)
          const done = yield* operationFinished(bank, reprocess.body.operation_id)
          assert.strictEqual(done.status, "completed", JSON.stringify(done))
          const listed = (yield* ok("GET", `${base}/memories/list?limit=100`)).text
          assert.notInclude(listed, "Zephyrine", "a reprocess brought the expired part back")
          assert.include(listed, "Marguerite")

          // The sweep deletes the expired chunk and rewrites the stored text without it.
          yield* sql`DELETE FROM operations WHERE id = ${holdSweep}`
          yield* ok("POST", `${base}/memories`, {
            items: [{
              content: "The fire drill is next Thursday.",
              expires_at: new Date(Date.now() + 3_600_000).toISOString()
            }]
          })
          yield* eventually(
            sql<
              { n: number }
            >`SELECT count(*)::int AS n FROM chunks WHERE bank_id = ${bank} AND text LIKE '%Zephyrine%'`
              .pipe(Effect.orDie),
            (rows) => rows[0]!.n === 0,
            Duration.seconds(30)
          )
          const stored = yield* storedText(bank, "mixed")
          assert.notInclude(stored, "Zephyrine")
          assert.include(stored, lasting)
          assert.strictEqual((yield* documentOf(bank, "mixed")).original_text, stored)
        }),
      150_000
    )

    it.effect("a forget of the entity an appended part names takes that part out of the document's text", () =>
      Effect.gen(function*() {
        const bank = "document-text-forget"
        const base = bankPath(bank)
        yield* ok("POST", `${base}/memories`, { items: [{ content: lasting, document_id: "notes" }] })
        yield* ok("POST", `${base}/memories`, {
          items: [{ content: secret, document_id: "notes", update_mode: "append" }]
        })
        yield* settled(bank)
        assert.include((yield* documentOf(bank, "notes")).original_text, "Zephyrine")

        const report = (yield* ok("POST", `${base}/forget`, { entity: "Zephyrine Okafor" })).body
        assert.isAbove(report.removed.memories, 0, JSON.stringify(report))
        const after = yield* documentOf(bank, "notes")
        assert.notInclude(after.original_text, "Zephyrine", "the forgotten part is still in the document's text")
        assert.notInclude(after.original_text, "flowerpot")
        assert.include(after.original_text, lasting)
        assert.strictEqual((yield* call("GET", `${base}/documents/notes/chunks`)).status, 200)
        assert.notInclude((yield* ok("GET", `${base}/documents/notes/chunks`)).text, "Zephyrine")
      }))
  }
)

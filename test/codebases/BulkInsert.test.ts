/**
 * The bulk write of snapshot rows on both database tiers: on PGlite (on either thread) it loads with `COPY` through
 * PGlite's own API, on PostgreSQL with `INSERT … unnest`. Values that need escaping in either (tabs, line breaks,
 * backslashes, a literal `\N`, quotes and braces in array elements, NULLs) read back as written, across more rows
 * than one batch, and a transaction that fails after the load leaves nothing behind.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type BulkColumn, bulkInsert } from "../../src/codebases/snapshot/BulkInsert.ts"
import { copyLoaderOf } from "../../src/storage/EmbeddedCopy.ts"
import { databaseTier, testApp } from "../support/TestServer.ts"

interface Probe {
  readonly n: number
  readonly text: string | null
  readonly score: number
  readonly flag: boolean | null
  readonly doc: unknown
  readonly tags: ReadonlyArray<string>
}

const columns: ReadonlyArray<BulkColumn<Probe>> = [
  { column: "n", type: "int", value: (p) => p.n },
  { column: "body", type: "text", value: (p) => p.text },
  { column: "score", type: "real", value: (p) => p.score },
  { column: "flag", type: "boolean", value: (p) => p.flag },
  { column: "doc", type: "json", value: (p) => p.doc },
  { column: "tags", type: "text[]", value: (p) => p.tags }
]

const awkward: ReadonlyArray<Omit<Probe, "n">> = [
  { text: "a\tb\nc\r\nd", score: 0.5, flag: true, doc: { say: "tab\there", list: [1, "\\N"] }, tags: ["auth", "sql"] },
  { text: "\\N", score: 0, flag: false, doc: null, tags: [] },
  {
    text: "C:\\path\\to\\file \\t not a tab",
    score: 1.25,
    flag: null,
    doc: ["x\ny"],
    tags: ["quote\"d", "back\\slash", "{brace},comma", "NULL", ""]
  },
  { text: null, score: -3, flag: true, doc: "plain", tags: ["ünïcode ✓"] },
  { text: "", score: 0.0001, flag: false, doc: {}, tags: ["a\tb"] }
]

const rows: ReadonlyArray<Probe> = Array.from({ length: 4321 }, (_, n) => ({ n, ...awkward[n % awkward.length]! }))

layer(testApp(), { excludeTestServices: true })("bulk insert of snapshot rows", (it) => {
  it.effect("reads back every awkward value as written, and rolls back with its transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      assert.strictEqual(
        copyLoaderOf(sql) !== undefined,
        databaseTier === "pglite",
        "COPY on PGlite, INSERT on PostgreSQL"
      )
      yield* sql`CREATE TABLE bulk_probe (owner text NOT NULL, n int PRIMARY KEY, body text, score real NOT NULL,
        flag boolean, doc json, tags text[] NOT NULL)`
      yield* bulkInsert(sql, "bulk_probe", { owner: "o\t1" }, columns, rows).pipe(sql.withTransaction)

      const stored = yield* sql<
        {
          owner: string
          n: number
          body: string | null
          score: number
          flag: boolean | null
          doc: unknown
          tags: Array<string>
        }
      >`
        SELECT owner, n, body, score::float8 AS score, flag, doc, tags FROM bulk_probe ORDER BY n`
      assert.strictEqual(stored.length, rows.length)
      assert.deepStrictEqual(
        stored.map(({ owner, n, body, score, flag, doc, tags }) => ({ owner, n, text: body, score, flag, doc, tags })),
        rows.map((row) => ({ owner: "o\t1", ...row, score: Math.fround(row.score), tags: [...row.tags] }))
      )

      const failed = yield* bulkInsert(sql, "bulk_probe", { owner: "later" }, columns, [{ ...rows[0]!, n: 99_999 }])
        .pipe(
          Effect.andThen(Effect.fail("abandoned" as const)),
          sql.withTransaction,
          Effect.flip
        )
      assert.strictEqual(failed, "abandoned")
      const left = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM bulk_probe WHERE owner = 'later'`
      assert.strictEqual(left[0]?.count, 0, "nothing of the abandoned transaction stays")
    }))
})

/**
 * The admin consolidation route answers one and the same 404 for every schema this instance does not serve, so a
 * caller cannot tell another tenant's existing schema from a name that exists nowhere.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call } from "../support/HttpCalls.ts"
import { testApp } from "../support/TestServer.ts"
import { freshSchemaName } from "../support/TestRun.ts"

layer(testApp(), { excludeTestServices: true, timeout: "2 minutes" })("admin consolidation of another schema", (it) => {
  it.effect("is one indistinguishable 404 whether that schema exists or not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Another tenant's schema in the same database (a run-tagged name, dropped with the run's schemas).
      const other = freshSchemaName()
      yield* sql`CREATE SCHEMA ${sql(other)}`.pipe(Effect.orDie)
      const missing = freshSchemaName()

      const existing = yield* call("POST", `/v1/admin/consolidate/${other}`)
      const unknown = yield* call("POST", `/v1/admin/consolidate/${missing}`)
      assert.strictEqual(existing.status, 404, existing.text)
      assert.strictEqual(unknown.status, 404, unknown.text)
      // The same answer, but for the name the caller sent.
      assert.strictEqual(existing.text.replaceAll(other, "<schema>"), unknown.text.replaceAll(missing, "<schema>"))
      assert.match(existing.body.detail, /is not served by this instance/)
      assert.notInclude(existing.text, "SERVICE_API_DATABASE_SCHEMA")
    }))
})

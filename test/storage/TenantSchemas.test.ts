/**
 * Tenants in one PostgreSQL database are schemas, and each keeps to its own. Regression: a tenant started in a
 * database whose `public` schema already held an engram found that one's migrations table through the
 * `search_path` (`tenant, public`), created no tables of its own and read and wrote the `public` tenant's data.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Banks } from "../../src/bank/Banks.ts"
import { engramWith } from "../../src/index.ts"
import { databaseTier } from "../support/TestServer.ts"
import { freshSchemaName } from "../support/TestRun.ts"

const tenant = (schema: string) =>
  engramWith({
    dataDir: mkdtempSync(join(tmpdir(), "engram-tenant-")),
    databaseUrl: Option.some(Redacted.make(databaseTier)),
    databaseSchema: schema
  })

const inTenant = <A>(schema: string, effect: Effect.Effect<A, unknown, Banks | SqlClient.SqlClient>) =>
  Effect.scoped(Layer.build(tenant(schema)).pipe(Effect.flatMap((context) => Effect.provide(effect, context))))

describe.skipIf(databaseTier === "pglite")("tenant schemas in one database", () => {
  it.live(
    "a tenant beside an engram in public gets its own tables and sees none of public's banks",
    () =>
      Effect.gen(function*() {
        const marker = `public-tenant-${crypto.randomUUID().slice(0, 8)}`
        yield* inTenant("public", Effect.flatMap(Banks, (banks) => banks.ensure(marker)))
        const schema = freshSchemaName()
        const seen = yield* inTenant(
          schema,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const tables = yield* sql<
              { n: number }
            >`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = ${schema}`
            const banks = yield* (yield* Banks).list
            return { tables: tables[0]!.n, banks: banks.map((bank) => bank.bankId) }
          })
        )
        assert.isAbove(seen.tables, 40, "the tenant's tables were not created in its schema")
        assert.notInclude(seen.banks, marker)
        yield* inTenant("public", Effect.flatMap(Banks, (banks) => banks.remove(marker).pipe(Effect.ignore)))
      }),
    120_000
  )
})

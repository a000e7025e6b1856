/**
 * The audit log (one row per mutating request on a bank: who, what, when — never a body or a key) and an index for
 * bank templates, whose import matches directives by name. Templates themselves need no table: they are computed
 * from the bank's settings, directives and mental models.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE audit_logs (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      action text NOT NULL,
      transport text NOT NULL,
      method text NOT NULL,
      route text NOT NULL,
      status integer NOT NULL,
      actor text NOT NULL,
      started_at timestamptz NOT NULL,
      ended_at timestamptz NOT NULL
    )`
  // Lists are newest first per bank, and the stats read one bank's recent window.
  yield* sql`CREATE INDEX audit_logs_bank_started ON audit_logs (bank_id, started_at DESC, id DESC)`
  yield* sql`CREATE INDEX directives_bank_name ON directives (bank_id, name)`
})

/**
 * The dirty log of memory repos: every write to a versioned table of a repo's root bank leaves its (table, key)
 * in `repo_dirty_keys` (migration 0033), so status, a workspace diff and a commit read only the rows written since
 * HEAD instead of hashing the bank. The triggers are generated from the versioning plan when the server starts
 * (a table a later migration adds is tracked from the next start), one statement trigger per table and event
 * reading the transition table, so a bulk retain pays one extra statement per table, not one per row.
 *
 * A child table scoped through a parent (e.g. `unit_entities` → `entities`) finds its bank through that parent;
 * when the parent goes first (a cascading delete), the parent's BEFORE DELETE row trigger has already logged the
 * children, while it could still see them.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import { quote } from "./RowSql.ts"
import { literal, type VersionedTable } from "./VersionedTables.ts"

/** The key text exactly as `rowsCte` computes it for a root bank (no id mapping). */
export const keyExpr = (plan: VersionedTable, alias: string) =>
  plan.key === null || plan.key.length === 0
    ? "'[]'::text"
    : `jsonb_build_array(${plan.key.map((c) => `${alias}.${quote(c)}`).join(", ")})::text`

/** The bank of a row `alias` of the plan's table: its `bank_id`, or its parent's bank, looked up. */
const bankExpr = (
  plan: VersionedTable,
  plans: ReadonlyMap<string, VersionedTable>,
  alias: string,
  depth = 0
): string => {
  if (plan.scope._tag === "Bank") return `${alias}.bank_id`
  const parent = plans.get(plan.scope.parent)!
  const inner = `q${depth}`
  return `(SELECT ${bankExpr(parent, plans, inner, depth + 1)} FROM ${quote(parent.name)} ${inner} WHERE ${inner}.${
    quote(plan.scope.parentColumn)
  } = ${alias}.${quote(plan.scope.column)} LIMIT 1)`
}

const safeName = (table: string) => table.replace(/[^a-z0-9_]/gi, "_").slice(0, 40)

const logRows = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>, transition: string) => `
    INSERT INTO repo_dirty_keys (bank_id, table_name, k)
    SELECT DISTINCT s.b, ${literal(plan.name)}, s.k FROM (
      SELECT ${bankExpr(plan, plans, "n")} AS b, ${keyExpr(plan, "n")} AS k FROM ${transition} n) s
    WHERE s.b IN (SELECT root_bank_id FROM memory_repos)
    ON CONFLICT DO NOTHING;`

/** Tables whose rows find their bank through `parent`, directly or through other such tables. */
const descendants = (parent: string, plans: ReadonlyArray<VersionedTable>) =>
  plans.filter((plan) => plan.scope._tag === "Parent" && plan.scope.parent === parent)

/** The rows of `plan` under the parent row `OLD` of table `top`, as a WHERE clause on alias `d`. */
const underOld = (
  plan: VersionedTable,
  top: string,
  byName: ReadonlyMap<string, VersionedTable>,
  alias: string,
  depth = 0
): string => {
  if (plan.scope._tag !== "Parent") return "false"
  if (plan.scope.parent === top) return `${alias}.${quote(plan.scope.column)} = OLD.${quote(plan.scope.parentColumn)}`
  const parent = byName.get(plan.scope.parent)!
  const inner = `u${depth}`
  return `${alias}.${quote(plan.scope.column)} IN (SELECT ${inner}.${quote(plan.scope.parentColumn)} FROM ${
    quote(parent.name)
  } ${inner} WHERE ${underOld(parent, top, byName, inner, depth + 1)})`
}

/** Every table below `top` in the scope tree, nearest first. */
const allBelow = (top: string, plans: ReadonlyArray<VersionedTable>): ReadonlyArray<VersionedTable> => {
  const direct = descendants(top, plans)
  return [...direct, ...direct.flatMap((child) => allBelow(child.name, plans))]
}

/** The SQL statements that create (or replace) the trigger functions and triggers of one table. */
export const triggerSql = (plan: VersionedTable, all: ReadonlyArray<VersionedTable>): ReadonlyArray<string> => {
  const plans = new Map(all.map((p) => [p.name, p]))
  const name = safeName(plan.name)
  const table = quote(plan.name)
  const statements: Array<string> = []
  const events = [
    {
      op: "ins",
      event: "INSERT",
      referencing: "REFERENCING NEW TABLE AS repo_new_rows",
      body: logRows(plan, plans, "repo_new_rows")
    },
    {
      op: "upd",
      event: "UPDATE",
      referencing: "REFERENCING OLD TABLE AS repo_old_rows NEW TABLE AS repo_new_rows",
      body: logRows(plan, plans, "repo_old_rows") + logRows(plan, plans, "repo_new_rows")
    },
    {
      op: "del",
      event: "DELETE",
      referencing: "REFERENCING OLD TABLE AS repo_old_rows",
      body: logRows(plan, plans, "repo_old_rows")
    }
  ]
  for (const { body, event, op, referencing } of events) {
    statements.push(`CREATE OR REPLACE FUNCTION repo_dirty_${name}_${op}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM memory_repos) THEN RETURN NULL; END IF;${body}
      RETURN NULL;
    END $fn$`)
    statements.push(`CREATE OR REPLACE TRIGGER repo_dirty_${op} AFTER ${event} ON ${table} ${referencing}
      FOR EACH STATEMENT EXECUTE FUNCTION repo_dirty_${name}_${op}()`)
  }
  const below = allBelow(plan.name, all)
  if (below.length > 0) {
    const bank = plan.scope._tag === "Bank" ? "OLD.bank_id" : bankExpr(plan, plans, "OLD")
    const inserts = below.map((child) => `
        INSERT INTO repo_dirty_keys (bank_id, table_name, k)
        SELECT b, ${literal(child.name)}, ${keyExpr(child, "d")} FROM ${quote(child.name)} d WHERE ${
      underOld(child, plan.name, plans, "d")
    }
        ON CONFLICT DO NOTHING;`).join("")
    statements.push(`CREATE OR REPLACE FUNCTION repo_dirty_${name}_children() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      b text;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM memory_repos) THEN RETURN OLD; END IF;
      b := ${bank};
      IF b IS NULL OR NOT EXISTS (SELECT 1 FROM memory_repos WHERE root_bank_id = b) THEN RETURN OLD; END IF;${inserts}
      RETURN OLD;
    END $fn$`)
    statements.push(`CREATE OR REPLACE TRIGGER repo_dirty_children BEFORE DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION repo_dirty_${name}_children()`)
  }
  return statements
}

/**
 * A fingerprint of the generated SQL: the triggers are re-created only when the plan changed. Hashed natively: a
 * character loop over the statements took 0.1-0.2 s of every start (a CPU profile of the server), still cold code.
 */
const fingerprintOf = (statements: ReadonlyArray<string>) => {
  const hash = createHash("sha256")
  for (const text of statements) hash.update(text).update("\0")
  return `repo_dirty:${hash.digest("hex").slice(0, 16)}`
}

/**
 * Installs the triggers of every versioned table, once per plan: a comment on `repo_dirty_keys` remembers the
 * plan's fingerprint, and an advisory lock keeps two nodes of one schema starting together from racing on the catalog
 * (keyed by the schema too, so services of other schemas do not wait).
 */
export const installDirtyTriggers = (plans: ReadonlyArray<VersionedTable>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = plans.flatMap((plan) => triggerSql(plan, plans))
    const fingerprint = fingerprintOf(statements)
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext('engram.repo_dirty_triggers'), hashtext(current_schema()))`
      const current = yield* sql<
        { note: string | null }
      >`SELECT obj_description('repo_dirty_keys'::regclass, 'pg_class') AS note`
      if (current[0]?.note === fingerprint) return
      for (const text of statements) yield* sql.unsafe(text)
      yield* sql.unsafe(`COMMENT ON TABLE repo_dirty_keys IS ${literal(fingerprint)}`)
    }))
  })

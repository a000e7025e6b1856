/**
 * Which tables and columns a memory repo versions, discovered from the catalog at run time, so that a table a
 * new feature adds is versioned without anyone editing this file: every table with a `bank_id` column, and every
 * table that hangs off one of those by a foreign key, minus the exclusion lists below. Pure planning only; the
 * catalog read is in `readCatalog`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Bank-owned tables that are not part of a bank's versioned state, and why:
 * work in flight and its logs describe what the server did, not what the bank knows; caches and change logs are
 * derived and rebuilt; delivery logs record calls to the outside world that a reset cannot take back.
 */
export const excludedTables: ReadonlySet<string> = new Set([
  "operations", // the durable work queue: restoring it would re-run or lose work
  "llm_requests", // a log of model calls (cost, latency), not knowledge
  "memory_unit_changes", // trigger-fed change log the keyword index consumes
  "brain_change_marks", // how far each cluster node's brain has read that log
  "memory_change_horizons", // how far that log was pruned
  "memory_access_events", // access telemetry of the brain runtime
  "memory_access_counts", // read counters kept from that telemetry: a recall must not make a workspace dirty
  "bank_counts", // the stats' counts, kept by triggers from the memories and links a restore writes
  "brain_activity_models", // derived from access telemetry, rebuilt on demand
  "dream_schedules", // when the next trance is due: scheduler state
  "webhook_deliveries", // delivery outbox and history
  "webhook_delivery_attempts",
  "file_uploads", // staged upload bytes of file retains; the documents they become are versioned
  "stored_files", // export archives and staged imports: files the server made, not what the bank knows
  // Who changed the bank and when: a record of requests, not bank knowledge. Restoring a commit must not rewrite or
  // erase the history of the requests that led to it, and a fork must not inherit another bank's callers.
  "audit_logs",
  "engram_migrations",
  // The repo's own bookkeeping: a repo never versions itself.
  "repo_objects",
  "memory_repos",
  "repo_commits",
  "repo_branches",
  "repo_id_maps",
  "repo_dirty_keys" // which rows changed since HEAD (it has a bank_id, and would log its own writes)
])

/**
 * Columns never stored in a commit: secrets (a commit can be forked into another bank, diffs list rows), and
 * counters or timestamps that reads bump, which would make every recall a change. `bank_id` is implied. A
 * webhook's `url` and whole `http_config` are where receivers put their credentials (a token in the path or the
 * query, bearer headers, API-key params), so like the secret they are the live bank's, never a commit's; its
 * `updated_at` moves when they are edited, so it is left out too (rotating a token must not dirty the workspace).
 */
export const excludedColumns: Readonly<Record<string, ReadonlyArray<string>>> = {
  webhooks: ["secret", "url", "http_config", "updated_at"],
  memory_units: ["access_count"], // no longer written (the counts are in memory_access_counts); never a change
  // last_write_at and last_memory_write_at follow the writes a restore makes
  banks: ["created_at", "updated_at", "last_write_at", "last_memory_write_at"]
}

/** Unversioned columns that keep their live value when a commit is restored into the same bank. */
export const preservedColumns: Readonly<Record<string, ReadonlyArray<string>>> = {
  webhooks: ["secret", "url", "http_config"]
}

/**
 * What an unversioned `NOT NULL` column without a default gets when a row is inserted from a commit (a fork, or a
 * row deleted since): a webhook with an empty URL, which delivers nothing until its URL is set again.
 */
export const insertedDefaults: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  webhooks: { url: "''" }
}

/** The unversioned columns an insert from a commit names, and their values (SQL expressions). */
export const insertedDefaultsOf = (table: string) => Object.entries(insertedDefaults[table] ?? {})

/**
 * Keys of JSON columns a commit stores emptied (`{}`), for the same reason as the secret columns. None today: a
 * webhook's `http_config`, whose `headers` and `params` were emptied this way, is now left out whole.
 */
export const scrubbedJsonKeys: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>> = {}

/** A text as an SQL string literal, for catalog names spliced into statements (values are bind parameters). */
export const literal = (text: string) => `'${text.replaceAll("'", "''")}'`

/** `value` (a jsonb expression) as a commit stores it: the scrubbed keys emptied, when the column has any. */
export const scrubbedJson = (table: string, column: string, value: string) => {
  const keys = scrubbedJsonKeys[table]?.[column]
  if (keys === undefined) return value
  return `(${value} || jsonb_build_object(${keys.map((key) => `${literal(key)}, '{}'::jsonb`).join(", ")}))`
}

/** `stored` (a jsonb expression) with the scrubbed keys taken from `live` instead, when the column has any. */
export const withLiveJson = (table: string, column: string, stored: string, live: string) => {
  const keys = scrubbedJsonKeys[table]?.[column]
  if (keys === undefined) return stored
  return `(${stored} || jsonb_build_object(${
    keys.map((key) => `${literal(key)}, coalesce((${live}) -> ${literal(key)}, '{}'::jsonb)`).join(", ")
  }))`
}

export interface CatalogColumn {
  readonly table: string
  readonly column: string
  readonly isArray: boolean
  readonly isText: boolean
  /** A `jsonb` column: ids inside it are renamed like id columns (whole JSON strings equal to a mapped id). */
  readonly isJson?: boolean
  readonly generated: boolean
}

export interface CatalogConstraint {
  readonly table: string
  readonly kind: "p" | "u" | "f"
  readonly columns: ReadonlyArray<string>
  readonly refTable: string | null
  readonly refColumns: ReadonlyArray<string>
}

export interface Catalog {
  readonly columns: ReadonlyArray<CatalogColumn>
  readonly constraints: ReadonlyArray<CatalogConstraint>
}

/** How a table's rows are found for one bank: its own `bank_id`, or a foreign key into a table that has one. */
export type Scope =
  | { readonly _tag: "Bank" }
  | { readonly _tag: "Parent"; readonly column: string; readonly parent: string; readonly parentColumn: string }

export interface VersionedTable {
  readonly name: string
  /** Stored columns (no `bank_id`, no generated or excluded columns), in catalog order. */
  readonly columns: ReadonlyArray<string>
  readonly hasBankId: boolean
  /** Primary key without `bank_id`; empty when the key is `bank_id` alone; null when the table has no key. */
  readonly key: ReadonlyArray<string> | null
  readonly scope: Scope
  /** Columns whose values are globally unique ids: copied into another bank they must be renamed. */
  readonly identities: ReadonlyArray<string>
  /** Columns that hold such ids (the identities themselves, foreign keys to them, `*_id`/`*_ids` text). */
  readonly references: ReadonlyArray<{ readonly column: string; readonly isArray: boolean }>
  /** `jsonb` columns: ids inside them are renamed too. */
  readonly jsonColumns: ReadonlyArray<string>
  /** Every key column is text, so keys compare as text (and use the key's index). */
  readonly textKey: boolean
  /** Tables this one references by foreign key (restored first). */
  readonly dependsOn: ReadonlyArray<string>
}

export const readCatalog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<
    { tableName: string; columnName: string; dataType: string; udtName: string; isGenerated: string }
  >`
    SELECT table_name, column_name, data_type, udt_name, is_generated
    FROM information_schema.columns WHERE table_schema = current_schema()
    ORDER BY table_name, ordinal_position`
  const constraints = yield* sql<
    { tableName: string; kind: string; cols: string; refTable: string | null; refCols: string | null }
  >`
    SELECT cl.relname AS table_name, c.contype AS kind,
      (SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS cols,
      rc.relname AS ref_table,
      (SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n) AS ref_cols
    FROM pg_constraint c
    JOIN pg_class cl ON cl.oid = c.conrelid
    JOIN pg_namespace n ON n.oid = cl.relnamespace
    LEFT JOIN pg_class rc ON rc.oid = c.confrelid
    WHERE n.nspname = current_schema() AND c.contype IN ('p', 'u', 'f')
    ORDER BY cl.relname, c.conname`
  // A unique index (not a constraint) on one column also makes its values global identities.
  const uniqueIndexes = yield* sql<{ tableName: string; cols: string }>`
    SELECT t.relname AS table_name, string_agg(a.attname, ',') AS cols
    FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY (i.indkey)
    WHERE n.nspname = current_schema() AND i.indisunique AND NOT i.indisprimary AND i.indexprs IS NULL
    GROUP BY t.relname, i.indexrelid`
  const catalog: Catalog = {
    columns: columns.map((row) => ({
      table: row.tableName,
      column: row.columnName,
      isArray: row.dataType === "ARRAY",
      isText: row.udtName === "text" || row.udtName === "_text",
      isJson: row.udtName === "jsonb",
      generated: row.isGenerated === "ALWAYS"
    })),
    constraints: [
      ...constraints.map((row) => ({
        table: row.tableName,
        kind: row.kind as "p" | "u" | "f",
        columns: (row.cols ?? "").split(","),
        refTable: row.refTable,
        refColumns: row.refCols === null ? [] : row.refCols.split(",")
      })),
      ...uniqueIndexes.map((row) => ({
        table: row.tableName,
        kind: "u" as const,
        columns: row.cols.split(","),
        refTable: null,
        refColumns: []
      }))
    ]
  }
  return catalog
})

const idName = /(^|_)ids?$/

/** Plans the versioned tables in restore order (every table after the tables it references). */
export const planTables = (catalog: Catalog): ReadonlyArray<VersionedTable> => {
  const columnsOf = new Map<string, Array<CatalogColumn>>()
  for (const column of catalog.columns) {
    const list = columnsOf.get(column.table) ?? []
    list.push(column)
    columnsOf.set(column.table, list)
  }
  const constraintsOf = (table: string) => catalog.constraints.filter((c) => c.table === table)
  const hasBankId = (table: string) => (columnsOf.get(table) ?? []).some((c) => c.column === "bank_id")

  const scopes = new Map<string, Scope>()
  for (const table of columnsOf.keys()) {
    if (!excludedTables.has(table) && hasBankId(table)) scopes.set(table, { _tag: "Bank" })
  }
  // Child tables without `bank_id` join in through a single-column foreign key, until nothing new joins.
  for (let grew = true; grew;) {
    grew = false
    for (const table of columnsOf.keys()) {
      if (scopes.has(table) || excludedTables.has(table)) continue
      const link = constraintsOf(table).find((c) =>
        c.kind === "f" && c.columns.length === 1 && c.refTable !== null && scopes.has(c.refTable)
      )
      if (link === undefined) continue
      scopes.set(table, {
        _tag: "Parent",
        column: link.columns[0]!,
        parent: link.refTable!,
        parentColumn: link.refColumns[0]!
      })
      grew = true
    }
  }

  const identityColumns = new Map<string, Array<string>>()
  for (const table of scopes.keys()) {
    const single = constraintsOf(table).filter((c) => (c.kind === "p" || c.kind === "u") && c.columns.length === 1)
    const names = single.map((c) => c.columns[0]!).filter((name) => name !== "bank_id")
    identityColumns.set(table, [...new Set(names)])
  }

  const plans = new Map<string, VersionedTable>()
  for (const [table, scope] of scopes) {
    const excluded = new Set(["bank_id", ...(excludedColumns[table] ?? [])])
    const all = columnsOf.get(table) ?? []
    const stored = all.filter((c) => !c.generated && !excluded.has(c.column))
    const primary = constraintsOf(table).find((c) => c.kind === "p")
    const foreign = constraintsOf(table).filter((c) => c.kind === "f" && c.refTable !== null && scopes.has(c.refTable))
    const identities = identityColumns.get(table) ?? []
    const referencing = new Set<string>(identities)
    for (const fk of foreign) {
      fk.columns.forEach((column, i) => {
        const target = fk.refColumns[i]!
        if ((identityColumns.get(fk.refTable!) ?? []).includes(target)) referencing.add(column)
      })
    }
    for (const column of stored) {
      if (column.isText && idName.test(column.column)) referencing.add(column.column)
    }
    const key = primary === undefined ? null : primary.columns.filter((c) => c !== "bank_id")
    plans.set(table, {
      name: table,
      columns: stored.map((c) => c.column),
      hasBankId: hasBankId(table),
      key,
      scope,
      identities,
      references: stored.filter((c) => referencing.has(c.column) && c.isText).map((c) => ({
        column: c.column,
        isArray: c.isArray
      })),
      jsonColumns: stored.filter((c) => c.isJson === true).map((c) => c.column),
      textKey: (key ?? []).every((name) => all.some((c) => c.column === name && c.isText && !c.isArray)),
      dependsOn: [...new Set(foreign.map((fk) => fk.refTable!).filter((t) => t !== table))]
    })
  }
  return restoreOrder(plans)
}

/** Parents before children; a cycle (none today) falls back to name order for the tables in it. */
const restoreOrder = (plans: ReadonlyMap<string, VersionedTable>) => {
  const ordered: Array<VersionedTable> = []
  const placed = new Set<string>()
  const names = [...plans.keys()].sort()
  // `banks` first: every other table references it.
  if (plans.has("banks")) {
    ordered.push(plans.get("banks")!)
    placed.add("banks")
  }
  while (placed.size < plans.size) {
    const ready = names.filter((name) =>
      !placed.has(name) && plans.get(name)!.dependsOn.every((dep) => placed.has(dep) || !plans.has(dep))
    )
    const next = ready.length > 0 ? ready : [names.find((name) => !placed.has(name))!]
    for (const name of next) {
      ordered.push(plans.get(name)!)
      placed.add(name)
    }
  }
  return ordered
}

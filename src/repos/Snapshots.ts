/**
 * Capturing a bank's versioned state as content-addressed objects, and restoring such a state into a bank.
 * A snapshot is `{table → table-manifest hash}`; a table manifest maps top bucket → node hash; a node maps leaf
 * bucket → leaf hash; a leaf maps row key → row hash (256 × 256 buckets, so a one-row change stores one small
 * node and leaf at any table size). A full restore (new workspace, fork) deletes and re-inserts; `applyDelta`
 * writes only the rows that differ (checkout, reset). Both run inside the caller's transaction, so a crash
 * leaves the old state or the new one, never a mix. Must not decide repo semantics (branches, refs): that is
 * `MemoryRepos`.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { installDirtyTriggers } from "./DirtyLog.ts"
import { deleteKeysSql, insertRowsSql, mapIdsOfRowsSql, updateRowsSql } from "./DeltaSql.ts"
import { objectsLockShared } from "./ObjectsLock.ts"
import type { TableWrite } from "./RepoTypes.ts"
import type { IdMapping } from "./RowSql.ts"
import {
  bucketsSql,
  deleteSql,
  entriesSql,
  insertSql,
  leavesUnder,
  mapIdsSql,
  noMapping,
  quote,
  rowsCte,
  scopeWhere,
  storeBucketsSql,
  updateBankSql
} from "./RowSql.ts"
import type { VersionedTable } from "./VersionedTables.ts"
import { planTables, preservedColumns, readCatalog, scrubbedJsonKeys, withLiveJson } from "./VersionedTables.ts"

/** table → bucket number (as text) → bucket-manifest hash. */
export type BucketMap = Readonly<Record<string, string>>

export interface TableState {
  readonly hash: string
  readonly rows: number
  readonly buckets: BucketMap
}

export interface Capture {
  readonly tables: Readonly<Record<string, TableState>>
  readonly rootHash: string
  readonly bytesAdded: number
}

/** Hash of a JSON value with sorted keys: the id of table manifests and of whole snapshots. */
export const canonicalHash = (value: Readonly<Record<string, string>>) => {
  const sorted = Object.keys(value).sort().map((key) => [key, value[key]])
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex")
}

/** The differing rows of one table between two stored states: key → row hash on each side (absent: no row). */
export interface TreeDelta {
  readonly left: ReadonlyMap<string, string>
  readonly right: ReadonlyMap<string, string>
}

/**
 * Pairs of objects `(t, l, r)` of CTE `from` → the entries of their bodies that differ, as `(t, l, r)` again (one
 * level down: node hashes under table manifests, leaf hashes under nodes, row hashes under leaves, with the key).
 */
const differingEntries = (from: string) =>
  `SELECT f.t, d.k, d.l, d.r FROM ${from} f
    CROSS JOIN LATERAL (
      SELECT coalesce(a.key, c.key) AS k, a.value AS l, c.value AS r
      FROM jsonb_each_text(coalesce((SELECT o.body FROM repo_objects o WHERE o.hash = f.l), '{}'::jsonb)) a
      FULL JOIN jsonb_each_text(coalesce((SELECT o.body FROM repo_objects o WHERE o.hash = f.r), '{}'::jsonb)) c
        ON a.key = c.key
      WHERE a.value IS DISTINCT FROM c.value) d`

/**
 * `Snapshots.treeDelta`'s statement: table manifests → differing top buckets → differing leaves → differing rows,
 * all in the database, every object read by its hash through the primary key (scalar subqueries: joined, the
 * planner may scan the whole object table, 9 s at 10k memories); the last row (t NULL) counts the node hashes that
 * are not stored nodes (then the answer is not used).
 */
const treeDeltaSql = `WITH p AS MATERIALIZED (
    SELECT e ->> 0 AS t, e ->> 1 AS l, e ->> 2 AS r FROM jsonb_array_elements($1::jsonb) e),
  tops AS MATERIALIZED (${differingEntries("p")}),
  leaves AS MATERIALIZED (${differingEntries("tops")}),
  bad AS (SELECT count(*)::int AS n FROM (
      SELECT l AS h FROM tops WHERE l IS NOT NULL UNION ALL SELECT r FROM tops WHERE r IS NOT NULL) x
    WHERE (SELECT o.kind FROM repo_objects o WHERE o.hash = x.h) IS DISTINCT FROM 'node')
  SELECT t, k, l, r FROM (${differingEntries("leaves")}) d
  UNION ALL SELECT NULL, NULL, NULL, n::text FROM bad`

export const rootHashOf = (tables: Readonly<Record<string, string>>) => canonicalHash(tables)

/** Which bank to read and how its ids relate to the repo's (root-bank) ids. */
export interface Source {
  readonly bankId: string
  /** True for a hidden workspace: its renamed ids are read back as root-bank ids. */
  readonly workspace: boolean
}

export class Snapshots extends Context.Service<Snapshots, {
  readonly plans: Effect.Effect<ReadonlyArray<VersionedTable>>
  /** Reads a bank's state; with `previous` (the head's tables) also stores what is new. */
  readonly capture: (source: Source, store: false | Readonly<Record<string, string>>) => Effect.Effect<Capture>
  /** Bucket map of a stored table manifest. */
  readonly storedBuckets: (tableHash: string) => Effect.Effect<BucketMap>
  /** key → row hash for some buckets of a stored table, or of a live bank. */
  readonly storedEntries: (bucketHashes: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  readonly liveEntries: (
    source: Source,
    table: string,
    buckets: ReadonlyArray<number>
  ) => Effect.Effect<ReadonlyMap<string, string>>
  /**
   * Replaces bank `target`'s versioned rows with a snapshot. `rename` gives the snapshot's global ids stable
   * new names in the target (a workspace or a fork); `keepMap` keeps the renaming so the target reads back in
   * the snapshot's ids (workspaces). Must run inside a transaction.
   */
  readonly restore: (
    target: string,
    tables: Readonly<Record<string, string>>,
    options: { readonly rename: boolean; readonly keepMap: boolean }
  ) => Effect.Effect<void>
  /**
   * Writes only the differing rows into bank `target` (deletes first, children before parents; then updates
   * and inserts, parents first). `toLocal` renames root-bank ids to the target workspace's own. Must run inside
   * a transaction; the row objects named must be stored.
   */
  readonly applyDelta: (
    target: string,
    writes: ReadonlyArray<TableWrite>,
    options: { readonly toLocal: boolean }
  ) => Effect.Effect<void>
  /** Stored objects by hash (kind and body); missing hashes are absent from the map. */
  readonly objects: (
    hashes: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, { readonly kind: string; readonly body: Readonly<Record<string, string>> }>>
  /**
   * The leaves that differ between pairs of nodes (left node hash, right node hash; either may be absent), compared
   * in the database, or `undefined` when a hash is not a stored node (commits of the one-level layout name leaves).
   */
  readonly differingLeaves: (
    pairs: ReadonlyArray<readonly [string | undefined, string | undefined]>
  ) => Effect.Effect<{ readonly left: ReadonlyArray<string>; readonly right: ReadonlyArray<string> } | undefined>
  /**
   * The rows that differ between two stored states, for several tables at once, in one statement: per table (left
   * table manifest hash, right one; either may be absent) the keys whose row hash differs, with the hash on each
   * side (absent: no row). Equal top buckets and leaves are never read. `undefined` when a table manifest does not
   * name stored nodes (commits of the one-level layout name leaves): the caller compares bucket by bucket instead.
   */
  readonly treeDelta: (
    tables: ReadonlyArray<readonly [string, string | undefined, string | undefined]>
  ) => Effect.Effect<ReadonlyMap<string, TreeDelta> | undefined>
}>()("engram/repos/Snapshots") {
  static readonly layer = Layer.effect(
    Snapshots,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const plans = yield* Effect.cached(
        Effect.map(Effect.orDie(readCatalog.pipe(Effect.provideService(SqlClient.SqlClient, sql))), planTables)
      )
      const planMap = Effect.map(plans, (list) => new Map(list.map((plan) => [plan.name, plan])))
      // The dirty log's triggers follow the plan: installed (or replaced) when the plan changed since the last start.
      yield* Effect.orDie(installDirtyTriggers(yield* plans).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      const run = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
        Effect.orDie(sql.unsafe<A>(text, params))

      const mappingOf = (source: Source): IdMapping =>
        source.workspace ? { _tag: "ToCanonical", param: "$1" } : noMapping

      const tableManifests = (hashes: ReadonlyArray<string>) =>
        hashes.length === 0
          ? Effect.succeed(new Map<string, BucketMap>())
          : Effect.map(
            run<{ hash: string; body: BucketMap }>(
              `SELECT hash, body FROM repo_objects WHERE hash IN (SELECT value FROM jsonb_array_elements_text($1::jsonb))`,
              [JSON.stringify(hashes)]
            ),
            (rows) => new Map(rows.map((row) => [row.hash, row.body]))
          )

      const storeTableManifest = (buckets: BucketMap) =>
        Effect.gen(function*() {
          const hash = canonicalHash(buckets)
          const body = JSON.stringify(buckets)
          const inserted = yield* run<{ sizeBytes: number }>(
            `INSERT INTO repo_objects (hash, kind, body, size_bytes) VALUES ($1, 'table', $2::text::jsonb, octet_length($2::text))
             ON CONFLICT (hash) DO NOTHING RETURNING size_bytes`,
            [hash, body]
          )
          return { hash, added: inserted.reduce((sum, row) => sum + Number(row.sizeBytes), 0) }
        })

      const capture = Effect.fn("Snapshots.capture")(
        function*(source: Source, store: false | Readonly<Record<string, string>>) {
          const all = yield* plans
          const byName = yield* planMap
          // Held shared until the transaction ends: garbage collection (exclusive) cannot sweep what this stores.
          if (store !== false) yield* run(objectsLockShared, [])
          const previous = store === false ? new Map<string, BucketMap>() : yield* tableManifests(Object.values(store))
          const tables: Record<string, TableState> = {}
          let bytesAdded = 0
          for (const plan of all) {
            const cte = rowsCte(plan, byName, mappingOf(source))
            const prevHash = store === false ? undefined : store[plan.name]
            const prevBuckets = prevHash === undefined ? {} : previous.get(prevHash) ?? {}
            const rows = store === false
              ? yield* run<{ b: number; n: number; bh: string }>(bucketsSql(cte), [source.bankId])
              : yield* run<{ b: number; n: number; bh: string; added: string | number }>(
                storeBucketsSql(cte, "$2"),
                [source.bankId, JSON.stringify(prevBuckets)]
              )
            if (rows.length === 0) continue
            const buckets: Record<string, string> = {}
            let count = 0
            for (const row of rows) {
              buckets[String(row.b)] = row.bh
              count += Number(row.n)
            }
            if (store !== false) {
              const first = rows[0]!
              bytesAdded += "added" in first ? Number(first.added) : 0
              const manifest = yield* storeTableManifest(buckets)
              bytesAdded += manifest.added
              tables[plan.name] = { hash: manifest.hash, rows: count, buckets }
            } else {
              tables[plan.name] = { hash: canonicalHash(buckets), rows: count, buckets }
            }
          }
          const hashes = Object.fromEntries(Object.entries(tables).map(([name, state]) => [name, state.hash]))
          return { tables, rootHash: rootHashOf(hashes), bytesAdded }
        }
      )

      const storedBuckets = (tableHash: string) =>
        Effect.map(tableManifests([tableHash]), (found) => found.get(tableHash) ?? {})

      const storedEntries = (bucketHashes: ReadonlyArray<string>) =>
        Effect.map(
          bucketHashes.length === 0 ? Effect.succeed([]) : run<{ k: string; h: string }>(
            `SELECT e.key AS k, e.value AS h FROM (${
              leavesUnder("SELECT value FROM jsonb_array_elements_text($1::jsonb)")
            }) o CROSS JOIN LATERAL jsonb_each_text(o.body) e`,
            [JSON.stringify(bucketHashes)]
          ),
          (rows) => new Map(rows.map((row) => [row.k, row.h]))
        )

      const liveEntries = (source: Source, table: string, buckets: ReadonlyArray<number>) =>
        Effect.gen(function*() {
          const byName = yield* planMap
          const plan = byName.get(table)
          if (plan === undefined || buckets.length === 0) return new Map<string, string>()
          const rows = yield* run<{ k: string; h: string }>(
            entriesSql(rowsCte(plan, byName, mappingOf(source)), "$2"),
            [source.bankId, JSON.stringify(buckets)]
          )
          return new Map(rows.map((row) => [row.k, row.h]))
        })

      /** Secrets (and webhook URLs and HTTP settings) are not in commits; a restore into the same bank keeps the live ones, matched by key. */
      const keepPreserved = (target: string, byName: ReadonlyMap<string, VersionedTable>) =>
        Effect.gen(function*() {
          const kept: Array<{ plan: VersionedTable; column: string; rows: ReadonlyArray<{ k: string; v: unknown }> }> =
            []
          for (const [table, columns] of Object.entries(preservedColumns)) {
            const plan = byName.get(table)
            if (plan === undefined || plan.key === null || plan.key.length !== 1) continue
            for (const column of columns) {
              // As text, written back as a parameter of the column's type (a jsonb `http_config` as well as a text secret).
              const rows = yield* run<{ k: string; v: unknown }>(
                `SELECT t.${quote(plan.key[0]!)} AS k, t.${quote(column)}::text AS v FROM ${quote(table)} t WHERE ${
                  scopeWhere(plan, byName, "t")
                } AND t.${quote(column)} IS NOT NULL`,
                [target]
              )
              kept.push({ plan, column, rows })
            }
          }
          // Secret keys of JSON columns (webhook headers and params) likewise, merged into the restored value.
          const keptJson: Array<
            { plan: VersionedTable; column: string; rows: ReadonlyArray<{ k: string; v: string }> }
          > = []
          for (const [table, columns] of Object.entries(scrubbedJsonKeys)) {
            const plan = byName.get(table)
            if (plan === undefined || plan.key === null || plan.key.length !== 1) continue
            for (const column of Object.keys(columns)) {
              const rows = yield* run<{ k: string; v: string }>(
                `SELECT t.${quote(plan.key[0]!)} AS k, t.${quote(column)}::text AS v FROM ${quote(table)} t WHERE ${
                  scopeWhere(plan, byName, "t")
                }`,
                [target]
              )
              keptJson.push({ plan, column, rows })
            }
          }
          const byKey = (plan: VersionedTable) => `${scopeWhere(plan, byName, "t")} AND t.${quote(plan.key![0]!)} = $3`
          return Effect.andThen(
            Effect.forEach(kept, ({ plan, column, rows }) =>
              Effect.forEach(rows, (row) =>
                run(`UPDATE ${quote(plan.name)} t SET ${quote(column)} = $2 WHERE ${byKey(plan)}`, [
                  target,
                  row.v,
                  row.k
                ])), {
              discard: true
            }),
            Effect.forEach(keptJson, ({ plan, column, rows }) =>
              Effect.forEach(rows, (row) =>
                run(
                  `UPDATE ${quote(plan.name)} t SET ${quote(column)} = ${
                    withLiveJson(plan.name, column, `t.${quote(column)}`, "$2::text::jsonb")
                  } WHERE ${byKey(plan)}`,
                  [target, row.v, row.k]
                )), { discard: true })
          )
        })

      /**
       * Every brain of the bank — in memory on any node, or kept in its `.brain` file — describes rows a restore is
       * about to replace (links and re-inserted memories leave no trace in the change log). Moving the bank's
       * change-log horizon past every entry, in the restore's transaction, makes each of them rebuild from the tables
       * when it next catches up or is loaded, even after a crash right after the commit.
       */
      const invalidateBrains = (target: string) =>
        run(
          `INSERT INTO memory_change_horizons (bank_id, pruned_below)
           VALUES ($1, nextval(pg_get_serial_sequence('memory_unit_changes', 'change_seq')) + 1)
           ON CONFLICT (bank_id) DO UPDATE
             SET pruned_below = greatest(memory_change_horizons.pruned_below, excluded.pruned_below)`,
          [target]
        )

      const restore = Effect.fn("Snapshots.restore")(function*(
        target: string,
        tables: Readonly<Record<string, string>>,
        options: { readonly rename: boolean; readonly keepMap: boolean }
      ) {
        const all = yield* plans
        const byName = yield* planMap
        const putBack = options.rename ? Effect.void : yield* keepPreserved(target, byName)
        yield* run(`INSERT INTO banks (bank_id) VALUES ($1) ON CONFLICT (bank_id) DO NOTHING`, [target])
        yield* invalidateBrains(target)
        for (const plan of [...all].reverse()) {
          if (plan.name !== "banks") yield* run(deleteSql(plan, byName), [target])
        }
        yield* run(`DELETE FROM repo_id_maps WHERE workspace_bank_id = $1`, [target])
        const mapping: IdMapping = options.rename ? { _tag: "ToLocal", param: "$1" } : noMapping
        if (options.rename) {
          for (const plan of all) {
            const hash = tables[plan.name]
            if (hash === undefined) continue
            for (const column of plan.identities) yield* run(mapIdsSql(plan, column, "$2"), [target, hash])
          }
        }
        for (const plan of all) {
          const hash = tables[plan.name]
          if (hash === undefined) continue
          yield* run(plan.name === "banks" ? updateBankSql(plan, "$2") : insertSql(plan, "$2", mapping), [target, hash])
        }
        if (options.rename && !options.keepMap) {
          yield* run(`DELETE FROM repo_id_maps WHERE workspace_bank_id = $1`, [target])
        }
        yield* putBack
      })

      const applyDelta = Effect.fn("Snapshots.applyDelta")(function*(
        target: string,
        writes: ReadonlyArray<TableWrite>,
        options: { readonly toLocal: boolean }
      ) {
        const all = yield* plans
        const byName = yield* planMap
        const byTable = new Map(writes.map((write) => [write.table, write]))
        const mapping: IdMapping = options.toLocal ? { _tag: "ToLocal", param: "$1" } : noMapping
        const json = (values: ReadonlyArray<string>) => JSON.stringify(values)
        yield* invalidateBrains(target)
        if (options.toLocal) {
          // Every id a written row brings gets its local name before any row refers to it.
          for (const plan of all) {
            const write = byTable.get(plan.name)
            if (write === undefined) continue
            const incoming = [...write.update, ...write.insert, ...(write.replace ?? [])]
            if (incoming.length === 0) continue
            for (const column of plan.identities) yield* run(mapIdsOfRowsSql(column), [target, json(incoming)])
          }
        }
        for (const plan of [...all].reverse()) {
          const write = byTable.get(plan.name)
          if (write === undefined || plan.name === "banks") continue
          if (write.replace !== null) yield* run(deleteSql(plan, byName), [target])
          else if (write.deleteKeys.length > 0) {
            yield* run(deleteKeysSql(plan, byName, mapping), [target, json(write.deleteKeys)])
          }
        }
        for (const plan of all) {
          const write = byTable.get(plan.name)
          if (write === undefined) continue
          const update = updateRowsSql(plan, byName, mapping)
          if (write.update.length > 0 && update !== null) yield* run(update, [target, json(write.update)])
          const insert = write.replace ?? write.insert
          if (insert.length > 0 && plan.name !== "banks") {
            yield* run(insertRowsSql(plan, mapping), [target, json(insert)])
          }
        }
      })

      const objects = (hashes: ReadonlyArray<string>) =>
        hashes.length === 0
          ? Effect.succeed(new Map<string, { kind: string; body: Record<string, string> }>())
          : Effect.map(
            run<{ hash: string; kind: string; body: Record<string, string> }>(
              `SELECT hash, kind, body FROM repo_objects WHERE hash IN (SELECT value FROM jsonb_array_elements_text($1::jsonb))`,
              [JSON.stringify([...new Set(hashes)])]
            ),
            (rows) => new Map(rows.map((row) => [row.hash, { kind: row.kind, body: row.body }]))
          )

      // Nodes hold 256 leaf hashes each: a checkout between branches 10 memories apart touches ~280 top buckets of
      // the links table, and shipping both sides' nodes to the server to compare them (9 MB of JSON) was most of
      // its 0.4-3.3 s at 10k memories. The database compares them and answers only the leaves that differ.
      const differingLeaves = (pairs: ReadonlyArray<readonly [string | undefined, string | undefined]>) =>
        Effect.gen(function*() {
          const hashes = [...new Set(pairs.flatMap((pair) => pair.filter((h): h is string => h !== undefined)))]
          if (hashes.length === 0) return { left: [], right: [] }
          const kinds = yield* run<{ n: number }>(
            `SELECT count(*)::int AS n FROM repo_objects
             WHERE kind = 'node' AND hash IN (SELECT value FROM jsonb_array_elements_text($1::jsonb))`,
            [JSON.stringify(hashes)]
          )
          if ((kinds[0]?.n ?? 0) !== hashes.length) return undefined
          const rows = yield* run<{ lh: string | null; rh: string | null }>(
            `WITH p AS MATERIALIZED (SELECT e.value ->> 0 AS l, e.value ->> 1 AS r FROM jsonb_array_elements($1::jsonb) e)
             SELECT d.lh, d.rh FROM p
             LEFT JOIN repo_objects lo ON lo.hash = p.l
             LEFT JOIN repo_objects ro ON ro.hash = p.r
             CROSS JOIN LATERAL (
               SELECT a.value AS lh, c.value AS rh
               FROM jsonb_each_text(coalesce(lo.body, '{}'::jsonb)) a
               FULL JOIN jsonb_each_text(coalesce(ro.body, '{}'::jsonb)) c ON a.key = c.key
               WHERE a.value IS DISTINCT FROM c.value) d`,
            [JSON.stringify(pairs.map(([l, r]) => [l ?? null, r ?? null]))]
          )
          return {
            left: rows.flatMap((row) => row.lh === null ? [] : [row.lh]),
            right: rows.flatMap((row) => row.rh === null ? [] : [row.rh])
          }
        })

      const treeDelta = (tables: ReadonlyArray<readonly [string, string | undefined, string | undefined]>) =>
        Effect.gen(function*() {
          const differing = tables.filter(([, l, r]) => l !== r)
          const result = new Map<string, { left: Map<string, string>; right: Map<string, string> }>()
          if (differing.length === 0) return result as ReadonlyMap<string, TreeDelta>
          // The planner cannot know how few entries differ (it takes 100 rows per jsonb_each_text, 97 million rows
          // for three levels), so PostgreSQL compiled the statement with JIT: 2.7 s of a 3.0 s diff at 10k
          // memories. Off for this transaction only (a savepoint inside a repo operation's transaction).
          const rows = yield* Effect.orDie(sql.withTransaction(Effect.andThen(
            sql.unsafe(`SET LOCAL jit = off`),
            sql.unsafe<{ t: string | null; k: string | null; l: string | null; r: string | null }>(
              treeDeltaSql,
              [JSON.stringify(differing.map(([t, l, r]) => [t, l ?? null, r ?? null]))]
            )
          )))
          for (const row of rows) {
            if (row.t === null) {
              if (Number(row.r ?? 0) > 0) return undefined
              continue
            }
            const entry = result.get(row.t) ?? { left: new Map<string, string>(), right: new Map<string, string>() }
            if (row.l !== null) entry.left.set(row.k!, row.l)
            if (row.r !== null) entry.right.set(row.k!, row.r)
            result.set(row.t, entry)
          }
          for (const [t] of differing) if (!result.has(t)) result.set(t, { left: new Map(), right: new Map() })
          return result as ReadonlyMap<string, TreeDelta>
        })

      return Snapshots.of({
        treeDelta,
        plans,
        capture,
        storedBuckets,
        storedEntries,
        liveEntries,
        restore,
        applyDelta,
        objects,
        differingLeaves
      })
    })
  )
}

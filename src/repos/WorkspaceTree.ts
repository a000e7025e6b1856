/**
 * A root bank's working tree from its HEAD and the dirty log, at the cost of what changed: only the logged keys
 * are read from the bank (by primary key) and hashed, and only the leaves, nodes and table manifests on their
 * paths are rebuilt from HEAD's (three batched reads of `repo_objects`). The hashes are the ones a full capture
 * (`RowSql.storeBucketsSql`) computes, so a tree built here and one built by hashing the whole bank are equal
 * object for object (`test/repos/WorkspaceTree.test.ts` checks it). Used by status (nothing stored), and by a
 * commit, a checkout's stash and a workspace diff (the new objects stored).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { keyExpr } from "./DirtyLog.ts"
import { objectsLockShared } from "./ObjectsLock.ts"
import { mappedColumns, noMapping, quote, scopeWhere } from "./RowSql.ts"
import { canonicalHash, rootHashOf } from "./Snapshots.ts"
import type { Snapshots } from "./Snapshots.ts"
import { literal, type VersionedTable } from "./VersionedTables.ts"

/** A stored state: table → table manifest hash, and table → row count. */
export interface TreeState {
  readonly tables: Readonly<Record<string, string>>
  readonly rows: Readonly<Record<string, number>>
}

export interface TableChanges {
  readonly added: number
  readonly removed: number
  readonly changed: number
}

export interface WorkspaceTree extends TreeState {
  readonly rootHash: string
  readonly bytesAdded: number
  /** Per table with at least one row that differs from HEAD. */
  readonly changes: Readonly<Record<string, TableChanges>>
  /** Keys that differ from HEAD, per table (what a stash must log again when it is checked out). */
  readonly dirtyKeys: Readonly<Record<string, ReadonlyArray<string>>>
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** Top and leaf bucket of a key: the first two bytes of md5(key), as `rowsCte` computes them. */
export const bucketsOfKey = (key: string) => {
  const digest = createHash("md5").update(key, "utf8").digest()
  return { b: digest[0]!, b1: digest[1]! }
}

/** `leafHash` of `RowSql`: sorted (`COLLATE "C"`, i.e. by UTF-8 bytes) `key=row hash` lines. */
export const leafHashOf = (entries: ReadonlyMap<string, string>) => {
  const keys = [...entries.keys()].sort((x, y) => Buffer.compare(Buffer.from(x, "utf8"), Buffer.from(y, "utf8")))
  return sha256(keys.map((key) => `${key}=${entries.get(key)}`).join("\n"))
}

/** `nodeHash` of `RowSql`: `node` then the `leaf number=leaf hash` lines by leaf number. */
export const nodeHashOf = (leaves: ReadonlyMap<number, string>) => {
  const numbers = [...leaves.keys()].sort((x, y) => x - y)
  return sha256(["node", ...numbers.map((n) => `${n}=${leaves.get(n)}`)].join("\n"))
}

/**
 * (table, key text, row hash) of the logged keys that still exist, for every logged table in one statement (`$2`:
 * table → JSON array of key texts), and the bytes of the row objects it stored when asked (the last row, table NULL).
 * One statement per table was most of a status after one retained memory (a memory touches 6–8 tables).
 */
const liveRowsSql = (
  tables: ReadonlyArray<VersionedTable>,
  plans: ReadonlyMap<string, VersionedTable>,
  store: boolean
) => {
  const ctes = tables.map((plan, i) => {
    const key = plan.key ?? []
    const keys = `k${i}`
    const match = key.length === 0
      ? "true"
      : plan.textKey
      ? `(${key.map((c) => `t.${quote(c)}`).join(", ")}) IN (SELECT ${
        key.map((_, j) => `(k::jsonb ->> ${j})`).join(", ")
      } FROM ${keys})`
      : `${keyExpr(plan, "t")} IN (SELECT k FROM ${keys})`
    return `${keys} AS MATERIALIZED (SELECT value AS k FROM jsonb_array_elements_text($2::jsonb -> ${
      literal(plan.name)
    })),
  x${i} AS MATERIALIZED (SELECT ${mappedColumns(plan, "t", noMapping, true)} FROM ${quote(plan.name)} t
    WHERE ${scopeWhere(plan, plans, "t")} AND ${match}),
  r${i} AS MATERIALIZED (SELECT ${keyExpr(plan, `x${i}`)} AS k, to_jsonb(x${i}) AS body FROM x${i})`
  })
  const all = tables.map((plan, i) => `SELECT ${literal(plan.name)}::text AS t, k, body FROM r${i}`).join(
    "\n    UNION ALL "
  )
  const stored = store
    ? `, stored AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (h) h, 'row', body, octet_length(body::text) FROM live_rows
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes)`
    : ""
  const added = store ? "(SELECT coalesce(sum(size_bytes), 0) FROM stored)::bigint" : "0::bigint"
  return `WITH ${ctes.join(",\n  ")},
  live_rows AS MATERIALIZED (SELECT t, k, body, encode(sha256(convert_to(body::text, 'UTF8')), 'hex') AS h FROM (
    ${all}) a)${stored}
  SELECT t, k, h, NULL::bigint AS added FROM live_rows
  UNION ALL SELECT NULL, NULL, NULL, ${added}`
}

interface StoredObject {
  readonly hash: string
  readonly kind: "bucket" | "node" | "table"
  readonly body: Readonly<Record<string, string>>
}

export const makeWorkspaceTree = (snapshots: Snapshots["Service"]) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
      Effect.orDie(sql.unsafe<A>(text, params))

    const plans = snapshots.plans

    const storeObjects = (list: ReadonlyArray<StoredObject>) =>
      list.length === 0 ? Effect.succeed(0) : Effect.map(
        run<{ added: string | number }>(
          `WITH put AS (INSERT INTO repo_objects (hash, kind, body, size_bytes)
             SELECT DISTINCT ON (e ->> 'hash') e ->> 'hash', e ->> 'kind', e -> 'body', octet_length((e -> 'body')::text)
             FROM jsonb_array_elements($1::jsonb) e
             ON CONFLICT (hash) DO NOTHING RETURNING size_bytes)
           SELECT coalesce(sum(size_bytes), 0)::bigint AS added FROM put`,
          [JSON.stringify(list)]
        ),
        (rows) => Number(rows[0]?.added ?? 0)
      )

    /**
     * The table manifests `m`, the nodes they name at top buckets `b`, and the leaves those name at leaf buckets
     * `b1`, for paths `(m, b, b1)`: what rebuilding a working tree reads of HEAD, in one statement where it took three
     * dependent reads. Keyed by hash (a hash names one object, whatever its kind).
     */
    const pathObjects = (list: ReadonlyArray<readonly [string, number, number]>) =>
      list.length === 0
        ? Effect.succeed(new Map<string, { kind: string; body: Record<string, string> }>())
        : Effect.map(
          run<{ hash: string; kind: string; body: Record<string, string> }>(
            `WITH p AS MATERIALIZED (
               SELECT e ->> 0 AS m, e ->> 1 AS b, e ->> 2 AS b1 FROM jsonb_array_elements($1::jsonb) e),
             manifest_objects AS MATERIALIZED (
               SELECT x.m AS hash, o.kind, o.body FROM (SELECT DISTINCT m FROM p) x
               CROSS JOIN LATERAL (SELECT kind, body FROM repo_objects WHERE hash = x.m OFFSET 0) o),
             pn AS MATERIALIZED (SELECT p.b1, manifest_objects.body ->> p.b AS n FROM p JOIN manifest_objects ON manifest_objects.hash = p.m),
             node_objects AS MATERIALIZED (
               SELECT x.n AS hash, o.kind, o.body FROM (SELECT DISTINCT n FROM pn WHERE n IS NOT NULL) x
               CROSS JOIN LATERAL (SELECT kind, body FROM repo_objects WHERE hash = x.n OFFSET 0) o),
             leaf_objects AS MATERIALIZED (
               SELECT x.l AS hash, o.kind, o.body FROM (
                 SELECT DISTINCT node_objects.body ->> pn.b1 AS l FROM pn JOIN node_objects ON node_objects.hash = pn.n AND node_objects.kind = 'node') x
               CROSS JOIN LATERAL (SELECT kind, body FROM repo_objects WHERE hash = x.l OFFSET 0) o
               WHERE x.l IS NOT NULL)
             SELECT hash, kind, body FROM manifest_objects UNION ALL SELECT hash, kind, body FROM node_objects
             UNION ALL SELECT hash, kind, body FROM leaf_objects`,
            [JSON.stringify(list.map(([m, b, b1]) => [m, String(b), String(b1)]))]
          ),
          (rows) => new Map(rows.map((row) => [row.hash, { kind: row.kind, body: row.body }]))
        )

    /** The logged keys of a bank, per table; `consume` takes them out of the log (a write after this logs again). */
    const loggedKeys = (bankId: string, consume: boolean) =>
      Effect.map(
        run<{ tableName: string; k: string }>(
          consume
            ? `DELETE FROM repo_dirty_keys WHERE bank_id = $1 RETURNING table_name, k`
            : `SELECT table_name, k FROM repo_dirty_keys WHERE bank_id = $1`,
          [bankId]
        ),
        (rows) => {
          const byTable = new Map<string, Array<string>>()
          for (const row of rows) {
            const list = byTable.get(row.tableName) ?? []
            list.push(row.k)
            byTable.set(row.tableName, list)
          }
          return byTable
        }
      )

    /**
     * The working tree of root bank `bankId` over HEAD `head`; `undefined` when HEAD uses the one-level layout
     * of early commits (the caller hashes the bank instead; a consumed log must then be rolled back with the
     * transaction, which `MemoryRepos` does by hashing inside the same transaction). With `store`, the new objects are stored (inside
     * the caller's transaction, holding the shared lock that garbage collection waits for).
     */
    const build = (bankId: string, head: TreeState, options: { readonly store: boolean; readonly consume: boolean }) =>
      Effect.gen(function*() {
        const store = options.store
        const logged = yield* loggedKeys(bankId, options.consume)
        const clean: WorkspaceTree = {
          ...head,
          rootHash: rootHashOf(head.tables),
          bytesAdded: 0,
          changes: {},
          dirtyKeys: {}
        }
        if (logged.size === 0) return clean
        const all = yield* plans
        const byName = new Map(all.map((plan) => [plan.name, plan]))
        if (store) yield* run(objectsLockShared, [])
        let bytesAdded = 0
        // 1. The live row hash of every logged key (absent: the row is gone), every table in one statement.
        const live = new Map<string, Map<string, string>>()
        const read = [...logged.keys()].flatMap((table) => {
          const plan = byName.get(table)
          return plan === undefined ? [] : [plan] // a table a later migration dropped
        })
        for (const plan of read) live.set(plan.name, new Map())
        if (read.length > 0) {
          const rows = yield* run<
            { t: string | null; k: string | null; h: string | null; added: string | number | null }
          >(
            liveRowsSql(read, byName, store),
            [bankId, JSON.stringify(Object.fromEntries(read.map((plan) => [plan.name, logged.get(plan.name)!])))]
          )
          for (const row of rows) {
            if (row.t === null) bytesAdded += Number(row.added ?? 0)
            else live.get(row.t)?.set(row.k!, row.h!)
          }
        }
        // 2. HEAD's manifests, and the nodes and leaves on the logged keys' paths, in one statement.
        const tables = [...live.keys()]
        // table → top bucket → leaf bucket → the logged keys in that leaf (md5 once per key).
        const paths = new Map<string, Map<number, Map<number, Array<string>>>>()
        for (const table of tables) {
          const tops = new Map<number, Map<number, Array<string>>>()
          for (const key of logged.get(table)!) {
            const { b, b1 } = bucketsOfKey(key)
            const leaves = tops.get(b) ?? new Map<number, Array<string>>()
            const keys = leaves.get(b1) ?? []
            keys.push(key)
            leaves.set(b1, keys)
            tops.set(b, leaves)
          }
          paths.set(table, tops)
        }
        const found = yield* pathObjects(tables.flatMap((table) => {
          const manifest = head.tables[table]
          if (manifest === undefined) return []
          return [...paths.get(table)!].flatMap(([b, leaves]) =>
            [...leaves.keys()].map((b1) => [manifest, b, b1] as const)
          )
        }))
        const [manifests, nodes, leaves] = [found, found, found]
        const manifestOf = (table: string) => {
          const hash = head.tables[table]
          return hash === undefined ? {} : manifests.get(hash)?.body ?? {}
        }
        const nodeHashes = tables.flatMap((table) =>
          [...paths.get(table)!.keys()].flatMap((b) => manifestOf(table)[String(b)] ?? [])
        )
        // HEAD of the early one-level layout: its manifests name leaves (the caller hashes the bank instead).
        if (nodeHashes.some((hash) => (nodes.get(hash)?.kind ?? "node") !== "node")) return undefined
        // 3. New leaves, nodes and manifests along those paths.
        const toStore: Array<StoredObject> = []
        const newTables: Record<string, string> = { ...head.tables }
        const newRows: Record<string, number> = { ...head.rows }
        const changes: Record<string, TableChanges> = {}
        const dirtyKeys: Record<string, Array<string>> = {}
        for (const table of tables) {
          const found = live.get(table)!
          const manifest: Record<string, string> = { ...manifestOf(table) }
          let added = 0
          let removed = 0
          let changed = 0
          const differing: Array<string> = []
          for (const [b, leafNumbers] of paths.get(table)!) {
            const nodeHash = manifest[String(b)]
            const nodeBody = nodeHash === undefined ? {} : nodes.get(nodeHash)?.body ?? {}
            const node = new Map(Object.entries(nodeBody).map(([n, h]) => [Number(n), h]))
            for (const [b1, keys] of leafNumbers) {
              const leafHash = node.get(b1)
              const entries = new Map(Object.entries(leafHash === undefined ? {} : leaves.get(leafHash)?.body ?? {}))
              for (const key of keys) {
                const before = entries.get(key)
                const after = found.get(key)
                if (before === after) continue
                differing.push(key)
                if (before === undefined) added++
                else if (after === undefined) removed++
                else changed++
                if (after === undefined) entries.delete(key)
                else entries.set(key, after)
              }
              if (entries.size === 0) node.delete(b1)
              else {
                const hash = leafHashOf(entries)
                node.set(b1, hash)
                if (hash !== leafHash) toStore.push({ hash, kind: "bucket", body: Object.fromEntries(entries) })
              }
            }
            if (node.size === 0) delete manifest[String(b)]
            else {
              const hash = nodeHashOf(node)
              manifest[String(b)] = hash
              if (hash !== nodeHash) {
                toStore.push({
                  hash,
                  kind: "node",
                  body: Object.fromEntries([...node].map(([n, h]) => [String(n), h]))
                })
              }
            }
          }
          if (differing.length === 0) continue
          changes[table] = { added, removed, changed }
          dirtyKeys[table] = differing
          newRows[table] = (head.rows[table] ?? 0) + added - removed
          if (Object.keys(manifest).length === 0) {
            delete newTables[table]
            delete newRows[table]
          } else {
            const hash = canonicalHash(manifest)
            newTables[table] = hash
            toStore.push({ hash, kind: "table", body: manifest })
          }
        }
        if (Object.keys(changes).length === 0) return clean
        if (store) bytesAdded += yield* storeObjects(toStore)
        return {
          tables: newTables,
          rows: newRows,
          rootHash: rootHashOf(newTables),
          bytesAdded: store ? bytesAdded : 0,
          changes,
          dirtyKeys
        } satisfies WorkspaceTree
      })

    /** Empties a bank's dirty log (its working tree now equals HEAD), or sets it to exactly these keys. */
    const resetLog = (bankId: string, keys: Readonly<Record<string, ReadonlyArray<string>>> = {}) =>
      Effect.gen(function*() {
        yield* run(`DELETE FROM repo_dirty_keys WHERE bank_id = $1`, [bankId])
        const pairs = Object.entries(keys).flatMap(([table, list]) => list.map((k) => [table, k]))
        if (pairs.length === 0) return
        yield* run(
          `INSERT INTO repo_dirty_keys (bank_id, table_name, k)
           SELECT $1, e ->> 0, e ->> 1 FROM jsonb_array_elements($2::jsonb) e ON CONFLICT DO NOTHING`,
          [bankId, JSON.stringify(pairs)]
        )
      })

    /** Whether the log has anything for the bank: the clean-status read (one index probe). */
    const hasLogged = (bankId: string) =>
      Effect.map(
        run<{ x: number }>(`SELECT 1 AS x FROM repo_dirty_keys WHERE bank_id = $1 LIMIT 1`, [bankId]),
        (rows) => rows.length > 0
      )

    return { build, resetLog, hasLogged }
  })

export type WorkspaceTrees = Effect.Success<ReturnType<typeof makeWorkspaceTree>>

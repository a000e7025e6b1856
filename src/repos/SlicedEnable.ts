/**
 * The first enable of a bank in bounded slices. Hashing every row once is the one operation that must cost the
 * whole bank; done in one statement per table it held the only database session of the embedded tier for tens of
 * seconds (the whole service stopped). Here each slice is its own short transaction — at most `sliceRows` rows of
 * one table, taken in primary-key order after the last key done, hashed in the database and stored with their
 * top bucket in `repo_enable_rows`; then each table's tree is built from those rows a range of top buckets at a
 * time — and the fiber yields between slices, so other banks' requests run in between.
 *
 * The bank stays writable meanwhile: its repo row exists from the first slice on, so the dirty log records every
 * write, and the last step (one transaction) replays the logged keys over the tree built from the slices — the
 * slices may have seen a row before or after a write, the replay reads it again either way. The progress is in
 * `memory_repos.enable_progress`, so a crash leaves either no repo, or a repo whose next enable call resumes
 * where the last committed slice ended; status reports it meanwhile.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { keyExpr } from "./DirtyLog.ts"
import { objectsLockShared } from "./ObjectsLock.ts"
import { leafHash, mappedColumns, nodeHash, noMapping, quote, scopeWhere } from "./RowSql.ts"
import { canonicalHash } from "./Snapshots.ts"
import type { Snapshots } from "./Snapshots.ts"
import { literal, type VersionedTable } from "./VersionedTables.ts"

/**
 * Slice sizes: rows hashed per slice, and top buckets (of 256) whose leaves and nodes are built per slice of the
 * tree phase (a big table's tree slices take about 4 × `sliceRows` staged rows). 8,000 rows: at 10k memories the
 * sliced enable cost 1.36× the one-transaction capture, against 1.85× with 2,000 (`bench/repos-enable.ts`), and
 * another bank's recall p99 stayed under its quiet p99 meanwhile (`bench/repos.ts`). Mutable only so tests can
 * force many slices.
 */
export const enableTuning = { sliceRows: 8_000, sliceBuckets: 32 }

export interface EnableProgress {
  readonly phase: "rows" | "tree"
  /** Index into the plan of the table being read or built. */
  readonly table: number
  /** The last key text done in the rows phase; the next top bucket in the tree phase. */
  readonly last: string | null
  readonly top: number
  readonly rowsDone: number
  readonly bytes: number
  /** Per table built so far: top bucket → node hash, and the row count. */
  readonly buckets: Readonly<Record<string, Readonly<Record<string, string>>>>
  readonly counts: Readonly<Record<string, number>>
  /** Rows staged per table in the rows phase: sizes the tree phase's slices. */
  readonly staged?: Readonly<Record<string, number>>
}

export const startProgress: EnableProgress = {
  phase: "rows",
  table: 0,
  last: null,
  top: 0,
  rowsDone: 0,
  bytes: 0,
  buckets: {},
  counts: {}
}

/** One slice of a table's rows after `$3` (a key text, or null for the start), stored and staged for repo `$2`. */
const rowSliceSql = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>) => {
  const key = plan.key ?? []
  const sliced = key.length > 0 && plan.textKey
  const columns = key.map((c) => `t.${quote(c)}`).join(", ")
  const after = sliced
    ? `AND ($3::text IS NULL OR (${columns}) > (SELECT ${key.map((_, i) => `($3::jsonb ->> ${i})`).join(", ")}))`
    : "AND $3::text IS NULL"
  // One ordered index scan reads the slice's whole rows: reading the keys first and the rows again by key cost
  // 2,000 more index probes per slice.
  const page = sliced
    ? `x AS MATERIALIZED (SELECT ${mappedColumns(plan, "t", noMapping, true)} FROM ${quote(plan.name)} t
      WHERE ${scopeWhere(plan, plans, "t")} ${after} ORDER BY ${columns} LIMIT ${enableTuning.sliceRows}),`
    : `x AS MATERIALIZED (SELECT ${mappedColumns(plan, "t", noMapping, true)} FROM ${quote(plan.name)} t
    WHERE ${scopeWhere(plan, plans, "t")} ${after}),`
  const last = sliced
    ? `(SELECT jsonb_build_array(${key.map((c) => `p.${quote(c)}`).join(", ")})::text FROM x p
        ORDER BY ${key.map((c) => `p.${quote(c)} DESC`).join(", ")} LIMIT 1)`
    : "NULL::text"
  return `WITH ${page}
  r0 AS MATERIALIZED (SELECT ${keyExpr(plan, "x")} AS k, to_jsonb(x) AS body FROM x),
  r1 AS MATERIALIZED (SELECT k, body, encode(sha256(convert_to(body::text, 'UTF8')), 'hex') AS h,
    decode(md5(k), 'hex') AS d FROM r0),
  stored AS (INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (h) h, 'row', body, octet_length(body::text) FROM r1
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes),
  staged AS (INSERT INTO repo_enable_rows (repo_id, table_name, k, h, b, b1)
    SELECT $2, ${literal(plan.name)}, k, h, get_byte(d, 0), get_byte(d, 1) FROM r1 RETURNING 1)
  SELECT (SELECT count(*) FROM staged)::int AS n, (SELECT coalesce(sum(size_bytes), 0) FROM stored)::bigint AS added,
    ${sliced ? `(SELECT count(*) FROM x)::int` : "0"} AS paged, ${last} AS last`
}

/**
 * Leaves and nodes of top buckets `$3`..`$4` of a table's staged rows, stored; answers each node. Each leaf's and
 * node's body is aggregated in the same pass as its hash: joining the hashes back to separately aggregated bodies
 * (two materialised CTEs, no statistics) was planned as a nested loop, ~3 s per slice of 6,500 rows. The staged
 * rows are taken out as they are read (in the slice's transaction, with its progress), so no cleanup pass is left
 * to scan the staging table afterwards.
 */
const treeSliceSql = `WITH rb AS MATERIALIZED (DELETE FROM repo_enable_rows
    WHERE repo_id = $1 AND table_name = $2 AND b BETWEEN $3 AND $4 RETURNING k, h, b, b1),
  leaves AS MATERIALIZED (SELECT b, b1, count(*)::int AS n, ${leafHash} AS lh, jsonb_object_agg(k, h) AS entries
    FROM rb GROUP BY b, b1),
  nodes AS MATERIALIZED (SELECT b, sum(n)::int AS n, ${nodeHash} AS bh, jsonb_object_agg(b1::text, lh) AS body
    FROM leaves GROUP BY b),
  new_leaves AS (INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (lh) lh, 'bucket', entries, octet_length(entries::text) FROM leaves
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes),
  new_nodes AS (INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (bh) bh, 'node', body, octet_length(body::text) FROM nodes
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes)
  SELECT b, n, bh, ((SELECT coalesce(sum(size_bytes), 0) FROM new_leaves)
    + (SELECT coalesce(sum(size_bytes), 0) FROM new_nodes))::bigint AS added FROM nodes ORDER BY b`

/**
 * Runs one slice for repo `repoId` of root bank `bankId` from `progress`; answers the next progress, or `done`
 * with the tree built from the slices (the caller replays the dirty log over it and commits). Must run inside a
 * transaction that holds the repo's row lock.
 */
export const enableSlice = (
  snapshots: Snapshots["Service"],
  repoId: string,
  bankId: string,
  progress: EnableProgress
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
      Effect.orDie(sql.unsafe<A>(text, params))
    const plans = yield* snapshots.plans
    const byName = new Map(plans.map((plan) => [plan.name, plan]))
    yield* run(objectsLockShared, [])
    if (progress.phase === "rows") {
      const plan = plans[progress.table]
      if (plan === undefined) return { ...progress, phase: "tree" as const, table: 0, top: 0, last: null }
      const rows = yield* run<{ n: number; added: string | number; paged: number; last: string | null }>(
        rowSliceSql(plan, byName),
        [bankId, repoId, progress.last]
      )
      const row = rows[0]!
      const more = row.paged >= enableTuning.sliceRows && row.last !== null
      return {
        ...progress,
        table: more ? progress.table : progress.table + 1,
        last: more ? row.last : null,
        rowsDone: progress.rowsDone + Number(row.n),
        bytes: progress.bytes + Number(row.added),
        staged: { ...progress.staged, [plan.name]: (progress.staged?.[plan.name] ?? 0) + Number(row.n) }
      }
    }
    const plan = plans[progress.table]
    if (plan === undefined) return "done" as const
    const top = progress.top
    // About `sliceRows` × 4 staged rows per tree slice (building a leaf is cheaper than hashing a row), at most
    // `sliceBuckets` top buckets, and a small table in one slice.
    const staged = progress.staged?.[plan.name] ?? 0
    const width = staged <= enableTuning.sliceRows * 4
      ? 256
      : Math.max(1, Math.min(enableTuning.sliceBuckets, Math.floor((256 * enableTuning.sliceRows * 4) / staged)))
    const end = Math.min(255, top + width - 1)
    const nodes = yield* run<{ b: number; n: number; bh: string; added: string | number }>(
      treeSliceSql,
      [repoId, plan.name, top, end]
    )
    const buckets: Record<string, string> = { ...progress.buckets[plan.name] }
    let count = progress.counts[plan.name] ?? 0
    for (const node of nodes) {
      buckets[String(node.b)] = node.bh
      count += Number(node.n)
    }
    const added = nodes.length === 0 ? 0 : Number(nodes[0]!.added)
    const finished = end === 255
    return {
      ...progress,
      table: finished ? progress.table + 1 : progress.table,
      top: finished ? 0 : end + 1,
      bytes: progress.bytes + added,
      buckets: { ...progress.buckets, [plan.name]: buckets },
      counts: { ...progress.counts, [plan.name]: count }
    }
  })

/** The table manifests of a finished tree phase, stored; answers the state and the bytes they added. */
export const storeManifests = (progress: EnableProgress) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables: Record<string, string> = {}
    const rows: Record<string, number> = {}
    let bytes = 0
    for (const [table, buckets] of Object.entries(progress.buckets)) {
      if (Object.keys(buckets).length === 0) continue
      const hash = canonicalHash(buckets)
      const body = JSON.stringify(buckets)
      const inserted = yield* Effect.orDie(sql.unsafe<{ sizeBytes: number }>(
        `INSERT INTO repo_objects (hash, kind, body, size_bytes) VALUES ($1, 'table', $2::text::jsonb, octet_length($2::text))
         ON CONFLICT (hash) DO NOTHING RETURNING size_bytes`,
        [hash, body]
      ))
      bytes += inserted.reduce((sum, row) => sum + Number(row.sizeBytes), 0)
      tables[table] = hash
      rows[table] = progress.counts[table] ?? 0
    }
    return { state: { tables, rows }, bytes }
  })

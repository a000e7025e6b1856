/**
 * `purge_history`: the one operation that rewrites memory repo history. Inside the forget's transaction (so the live
 * forget and the rewrite commit together or not at all) it finds, in every tree the bank's repo holds — commits,
 * parked branches' stashed work, read copies — the rows of the forgotten memories and of what was derived from them,
 * writes new leaves, nodes and table manifests without them, gives every commit whose tree changed (and every commit
 * after it: its parent changed) a new id, moves branch heads and stashes to the new trees, drops read copies that held
 * the content, and deletes the replaced objects that no other repo still names. Must not log or return content; must
 * not collect garbage in general (only the objects it replaced). Longer than the house's 300 lines on purpose: its
 * steps share one transaction's temporary tables and the old → new hash maps, and read in order as one procedure.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { createHash } from "node:crypto"
import { canonicalHash, rootHashOf } from "../../repos/Snapshots.ts"
import { objectsLockExclusive } from "../../repos/ObjectsLock.ts"
import { dropHiddenBank, workspacePrefix } from "../../repos/RepoStore.ts"
import { readCopyMark } from "../../repos/SlicedFork.ts"
import { leafHashOf, nodeHashOf } from "../../repos/WorkspaceTree.ts"
import { withoutChunkTexts } from "./DocumentText.ts"

/** What the forget selected, live and by its selectors (matched again against the rows commits hold). */
export interface PurgeSelection {
  readonly memoryIds: ReadonlyArray<string>
  readonly entityIds: ReadonlyArray<string>
  readonly chunkIds: ReadonlyArray<string>
  readonly documentIds: ReadonlyArray<string>
  readonly entity: string | null
  readonly requestedIds: ReadonlyArray<string>
  readonly documentId: string | null
  readonly tag: string | null
}

export interface PurgeOutcome {
  /** Commits whose tree held forgotten rows. */
  readonly holding: ReadonlyArray<string>
  readonly rewrites: ReadonlyArray<{ readonly old_commit_id: string; readonly new_commit_id: string }>
  readonly objectsDeleted: number
  readonly readCopiesDropped: number
}

/** The repo is still building its first commit (its staged rows are not in any tree yet). */
export class RepoEnabling extends Error {}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`

/** Tables whose rows are matched by the forgotten entity's name in any string value (as forget matches them live). */
const namedTables = [
  "dream_runs",
  "dream_predictions",
  "dream_proposals",
  "anomaly_events",
  "entity_intelligence",
  "mental_model_refreshes",
  "observation_history",
  "memory_unit_archive"
]
/** Tables whose rows go when any string in them holds a forgotten memory or entity id (evidence, citations, history). */
const citingTables = [
  "dream_runs",
  "dream_predictions",
  "dream_proposals",
  "dream_prediction_outcomes",
  "anomaly_events",
  "anomaly_corrections",
  "taste_sets",
  "entity_intelligence",
  "mental_model_refreshes",
  "observation_history"
]
const memoryTables = [
  "memory_units",
  "memory_unit_archive",
  "memory_links",
  "unit_entities",
  "entities",
  "entity_aliases",
  "entity_trajectories",
  "mental_models",
  "chunks",
  "documents"
]
const purgedTables = [...new Set([...memoryTables, ...citingTables])]

/** A commit id for a rewritten commit, from what it now is: the same rewrite gives the same id (a dry run's are exact). */
const rewrittenId = (oldId: string, rootHash: string, parent: string | null) => {
  const hex = createHash("sha256").update(`${oldId}\n${rootHash}\n${parent ?? ""}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

interface CommitRow {
  readonly commitId: string
  readonly parentCommitId: string | null
  readonly branchName: string
  readonly message: string
  readonly actor: string
  readonly tables: Record<string, string>
  readonly rowCounts: Record<string, number>
  readonly bytesAdded: string | number
  readonly createdAt: Date
}

interface BranchRow {
  readonly branchName: string
  readonly headCommitId: string | null
  readonly workspaceBankId: string
  readonly stateTables: Record<string, string> | null
  readonly stateRows: Record<string, number> | null
  readonly replicaTables: Record<string, string> | null
}

export const purgeHistory = Effect.fn("Forgetting.purgeHistory")(function*(bankId: string, selection: PurgeSelection) {
  const sql = yield* SqlClient.SqlClient
  const run = <A extends object = Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) =>
    sql.unsafe<A>(text, params)
  const none: PurgeOutcome = { holding: [], rewrites: [], objectsDeleted: 0, readCopiesDropped: 0 }
  const repos = yield* run<{ repoId: string; enableProgress: unknown }>(
    `SELECT repo_id, enable_progress FROM memory_repos WHERE root_bank_id = $1 FOR UPDATE`,
    [bankId]
  )
  const repo = repos[0]
  if (repo === undefined) return none
  if (repo.enableProgress !== null) return yield* Effect.die(new RepoEnabling())
  const repoId = repo.repoId
  // A read copy being made (in slices, `MemoryRepos.firstCopy`) copies an old tree: it stops, its part-made bank goes.
  // Before the objects lock: a slice holds its job row while it waits for that lock (shared).
  const copying = yield* run<{ target_bank_id: string }>(
    `DELETE FROM repo_forks WHERE source_repo_id = $1 AND (request ->> $2)::boolean RETURNING target_bank_id`,
    [repoId, readCopyMark]
  )
  // Exclusive: no transaction stores objects (which may be the ones deleted below) until this one ends.
  yield* run(objectsLockExclusive)
  const commits = yield* run<CommitRow>(
    `SELECT commit_id, parent_commit_id, branch_name, message, actor, tables, row_counts, bytes_added, created_at
     FROM repo_commits WHERE repo_id = $1 ORDER BY created_at, commit_id`,
    [repoId]
  )
  const branches = yield* run<BranchRow>(
    `SELECT branch_name, head_commit_id, workspace_bank_id, state_tables, state_rows, replica_tables
     FROM repo_branches WHERE repo_id = $1 ORDER BY branch_name`,
    [repoId]
  )
  const trees = [
    ...commits.map((c) => c.tables),
    ...branches.flatMap((b) => [b.stateTables, b.replicaTables].filter((t): t is Record<string, string> => t !== null))
  ]
  const manifests = [
    ...new Set(
      trees.flatMap((tables) =>
        Object.entries(tables).filter(([table]) => purgedTables.includes(table)).map(([table, hash]) =>
          `${table}\u0000${hash}`
        )
      )
    )
  ].map((pair) => pair.split("\u0000") as [string, string])
  if (manifests.length === 0) return none

  // Every row (and leaf) the repo's trees reach in the tables a forget touches.
  // Each leaf with its top: the node that names it, or itself when the table's bucket is a leaf (nodes to rebuild).
  yield* run(
    `CREATE TEMP TABLE IF NOT EXISTS purge_leaves (tbl text, lh text, top text, PRIMARY KEY (tbl, lh, top)) ON COMMIT DROP`
  )
  yield* run(`CREATE TEMP TABLE IF NOT EXISTS purge_entries (tbl text, lh text, h text) ON COMMIT DROP`)
  yield* run(`CREATE TEMP TABLE IF NOT EXISTS purge_reach (tbl text, h text, PRIMARY KEY (tbl, h)) ON COMMIT DROP`)
  yield* run(
    `CREATE TEMP TABLE IF NOT EXISTS purge_gone (tbl text, h text, nh text, body jsonb, PRIMARY KEY (tbl, h)) ON COMMIT DROP`
  )
  yield* run(`DELETE FROM purge_leaves`)
  yield* run(`DELETE FROM purge_entries`)
  yield* run(`DELETE FROM purge_reach`)
  yield* run(`DELETE FROM purge_gone`)
  yield* run(
    `WITH m AS (SELECT e ->> 0 AS tbl, e ->> 1 AS mh FROM jsonb_array_elements($1::jsonb) e),
     tops AS (SELECT DISTINCT m.tbl, t.value AS th FROM m JOIN repo_objects o ON o.hash = m.mh
       CROSS JOIN LATERAL jsonb_each_text(o.body) t)
     INSERT INTO purge_leaves (tbl, lh, top)
     SELECT tops.tbl, tops.th, tops.th FROM tops JOIN repo_objects lf ON lf.hash = tops.th AND lf.kind = 'bucket'
     UNION
     SELECT tops.tbl, n.value, tops.th FROM tops JOIN repo_objects nd ON nd.hash = tops.th AND nd.kind = 'node'
       CROSS JOIN LATERAL jsonb_each_text(nd.body) n
     ON CONFLICT DO NOTHING`,
    [JSON.stringify(manifests)]
  )
  // Which leaf holds which row, kept so the leaves to rebuild are found without expanding every leaf again.
  yield* run(
    `INSERT INTO purge_entries (tbl, lh, h)
     SELECT l.tbl, l.lh, e.value FROM (SELECT DISTINCT tbl, lh FROM purge_leaves) l JOIN repo_objects o ON o.hash = l.lh
     CROSS JOIN LATERAL jsonb_each_text(o.body) e`
  )
  yield* run(`INSERT INTO purge_reach (tbl, h) SELECT DISTINCT tbl, h FROM purge_entries ON CONFLICT DO NOTHING`)
  const reached = (table: string, where: string, select: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      run<{ v: string | null }>(
        `SELECT DISTINCT ${select} AS v FROM purge_reach r JOIN repo_objects o ON o.hash = r.h
         WHERE r.tbl = '${table}' AND (${where})`,
        params
      ),
      (rows) => rows.flatMap((row) => row.v === null ? [] : [row.v])
    )
  const list = (values: Iterable<string>) => JSON.stringify([...values])
  const textArray = (param: string) => `ARRAY(SELECT jsonb_array_elements_text(${param}::jsonb))`

  // The entities and memories the selectors name in any tree, besides the live ones.
  const entities = new Set(selection.entityIds)
  if (selection.entity !== null) {
    for (
      const id of yield* reached(
        "entities",
        `lower(o.body ->> 'canonical_name') = lower($1::text)`,
        `o.body ->> 'id'`,
        [selection.entity]
      )
    ) entities.add(id)
    for (
      const id of yield* reached(
        "entity_aliases",
        `lower(o.body ->> 'alias') = lower($1::text)`,
        `o.body ->> 'entity_id'`,
        [selection.entity]
      )
    ) entities.add(id)
  }
  const memories = new Set([...selection.memoryIds, ...selection.requestedIds])
  const pattern = selection.entity === null ? null : likePattern(selection.entity)
  for (
    const id of yield* reached(
      "memory_units",
      `($1::text IS NOT NULL AND o.body ->> 'text' ILIKE $1::text) OR o.body ->> 'document_id' = $2::text
        OR ($3::text IS NOT NULL AND coalesce(o.body -> 'tags', '[]'::jsonb) ? $3::text)`,
      `o.body ->> 'id'`,
      [pattern, selection.documentId, selection.tag]
    )
  ) memories.add(id)
  for (
    const id of yield* reached(
      "unit_entities",
      `o.body ->> 'entity_id' = ANY(${textArray("$1")})`,
      `o.body ->> 'unit_id'`,
      [list(entities)]
    )
  ) {
    memories.add(id)
  }
  for (
    const id of yield* reached(
      "memory_unit_archive",
      `($1::text IS NOT NULL AND (o.body -> 'unit' ->> 'text' ILIKE $1::text OR EXISTS (
          SELECT 1 FROM jsonb_array_elements_text(coalesce(o.body -> 'entity_names', '[]'::jsonb)) n WHERE lower(n) = lower($2::text))))
        OR o.body -> 'unit' ->> 'document_id' = $3::text
        OR ($4::text IS NOT NULL AND coalesce(o.body -> 'unit' -> 'tags', '[]'::jsonb) ? $4::text)`,
      `o.body ->> 'unit_id'`,
      [pattern, selection.entity, selection.documentId, selection.tag]
    )
  ) memories.add(id)
  // Observations built on a forgotten fact go too (as forget releases them live), and those built on them.
  for (let round = 0; round < 8; round++) {
    const more = yield* reached(
      "memory_units",
      `coalesce(o.body -> 'source_fact_ids', '[]'::jsonb) ?| ${textArray("$1")} AND NOT (o.body ->> 'id' = ANY(${
        textArray("$1")
      }))`,
      `o.body ->> 'id'`,
      [list(memories)]
    )
    if (more.length === 0) break
    for (const id of more) memories.add(id)
  }

  // The rows that go, per table, and the mental models kept emptied (as forget leaves them live).
  const ids = [...memories, ...entities]
  /** `$1` and `$2` are typed here whether `where` names both or not (an unnamed parameter has no type otherwise). */
  const gone = (table: string, where: string, params: readonly [string, string | null]) =>
    run(
      `WITH p AS (SELECT $1::jsonb AS a, $2::text AS b)
       INSERT INTO purge_gone (tbl, h) SELECT r.tbl, r.h FROM purge_reach r JOIN repo_objects o ON o.hash = r.h
       WHERE r.tbl = '${table}' AND (${where}) ON CONFLICT DO NOTHING`,
      params
    )
  const M = textArray("$1")
  const E = textArray("$2::text")
  const params = [list(memories), list(entities)] as const
  yield* gone("memory_units", `o.body ->> 'id' = ANY(${M})`, params)
  yield* gone("memory_unit_archive", `o.body ->> 'unit_id' = ANY(${M})`, params)
  yield* gone("memory_links", `o.body ->> 'from_id' = ANY(${M}) OR o.body ->> 'to_id' = ANY(${M})`, params)
  yield* gone("unit_entities", `o.body ->> 'unit_id' = ANY(${M}) OR o.body ->> 'entity_id' = ANY(${E})`, params)
  yield* gone("entities", `o.body ->> 'id' = ANY(${E})`, params)
  yield* gone("entity_aliases", `o.body ->> 'entity_id' = ANY(${E})`, params)
  yield* gone("entity_trajectories", `o.body ->> 'entity_id' = ANY(${E})`, params)
  const cites = `EXISTS (SELECT 1 FROM unnest(${textArray("$1")}) i WHERE strpos(o.body::text, i) > 0)`
  const names = `($2::text IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_path_query(o.body, 'strict $.**') v
    WHERE jsonb_typeof(v) = 'string' AND (v #>> '{}') ILIKE $2::text))`
  for (const table of citingTables) yield* gone(table, cites, [list(ids), pattern])
  for (const table of namedTables) yield* gone(table, names, [list(ids), pattern])
  // Chunks and documents that no kept memory of any tree uses any longer.
  const keptMemories =
    `r.tbl = 'memory_units' AND NOT EXISTS (SELECT 1 FROM purge_gone g WHERE g.tbl = r.tbl AND g.h = r.h)`
  const orphans = (column: string, extra: ReadonlyArray<string>) =>
    Effect.map(
      run<{ v: string }>(
        `SELECT DISTINCT v FROM (
           SELECT o.body ->> '${column}' AS v FROM purge_gone g JOIN repo_objects o ON o.hash = g.h WHERE g.tbl = 'memory_units'
           UNION SELECT jsonb_array_elements_text($1::jsonb)) s
         WHERE v IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM purge_reach r JOIN repo_objects o ON o.hash = r.h WHERE ${keptMemories} AND o.body ->> '${column}' = s.v)`,
        [JSON.stringify(extra)]
      ),
      (rows) => rows.map((row) => row.v)
    )
  const chunkIds = yield* orphans("chunk_id", selection.chunkIds)
  const documentIds = yield* orphans("document_id", [
    ...selection.documentIds,
    ...(selection.documentId === null ? [] : [selection.documentId])
  ])
  yield* gone("chunks", `o.body ->> 'id' = ANY(${M}) OR o.body ->> 'document_id' = ANY(${E})`, [
    list(chunkIds),
    list(documentIds)
  ])
  yield* gone("documents", `o.body ->> 'document_id' = ANY(${E})`, [list([]), list(documentIds)])
  // A document a tree keeps loses the pieces of its chunks that went, as the live forget rewrites the live text.
  const keptDocuments = yield* run<{ h: string; text: string; gone: ReadonlyArray<string> }>(
    `WITH gone_chunks AS (SELECT DISTINCT o.body ->> 'document_id' AS doc, o.body ->> 'text' AS text
       FROM purge_gone g JOIN repo_objects o ON o.hash = g.h WHERE g.tbl = 'chunks')
     SELECT r.h, o.body ->> 'original_text' AS text,
       (SELECT jsonb_agg(c.text) FROM gone_chunks c WHERE c.doc = o.body ->> 'document_id') AS gone
     FROM purge_reach r JOIN repo_objects o ON o.hash = r.h
     WHERE r.tbl = 'documents' AND o.body ->> 'original_text' IS NOT NULL
       AND o.body ->> 'document_id' IN (SELECT doc FROM gone_chunks)
       AND NOT EXISTS (SELECT 1 FROM purge_gone g WHERE g.tbl = r.tbl AND g.h = r.h)`
  )
  const shortened = keptDocuments.flatMap(({ gone: pieces, h, text }) => {
    const rest = withoutChunkTexts(text, pieces)
    return rest === text ? [] : [{ h, text: rest }]
  })
  if (shortened.length > 0) {
    yield* run(
      `INSERT INTO purge_gone (tbl, h, nh, body)
       SELECT 'documents', o.hash, encode(sha256(convert_to(s.body::text, 'UTF8')), 'hex'), s.body
       FROM jsonb_array_elements($1::jsonb) e JOIN repo_objects o ON o.hash = e ->> 'h'
       CROSS JOIN LATERAL (SELECT o.body || jsonb_build_object('original_text', e ->> 'text') AS body) s
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(shortened)]
    )
  }
  yield* run(
    `WITH p AS (SELECT $1::jsonb AS a, $2::text AS b)
     INSERT INTO purge_gone (tbl, h, nh, body)
     SELECT r.tbl, r.h, encode(sha256(convert_to(s.body::text, 'UTF8')), 'hex'), s.body
     FROM purge_reach r JOIN repo_objects o ON o.hash = r.h
     CROSS JOIN LATERAL (SELECT o.body || '{"content": "", "reflect_response": null, "last_refreshed_at": null}'::jsonb AS body) s
     WHERE r.tbl = 'mental_models' AND (${names} OR ${cites}) AND s.body <> o.body
     ON CONFLICT DO NOTHING`,
    [list(memories), pattern]
  )
  yield* run(
    `INSERT INTO repo_objects (hash, kind, body, size_bytes)
     SELECT DISTINCT ON (nh) nh, 'row', body, octet_length(body::text) FROM purge_gone WHERE nh IS NOT NULL
     ON CONFLICT (hash) DO NOTHING`
  )

  // New leaves without the rows (or with the emptied models); then nodes, then table manifests.
  const replaced = new Map<string, string | null>()
  const removedOf = new Map<string, number>()
  const changes = yield* run<{ tbl: string; lh: string; body: Record<string, string> }>(
    `SELECT l.tbl, l.lh, o.body FROM (
       SELECT DISTINCT e.tbl, e.lh FROM purge_gone g JOIN purge_entries e ON e.tbl = g.tbl AND e.h = g.h) l
     JOIN repo_objects o ON o.hash = l.lh`
  )
  const goneRows = yield* run<{ tbl: string; h: string; nh: string | null }>(`SELECT tbl, h, nh FROM purge_gone`)
  const fate = new Map(goneRows.map((row) => [`${row.tbl}\u0000${row.h}`, row.nh]))
  const newObjects: Array<{ hash: string; kind: string; body: Record<string, string> }> = []
  /** Keys whose committed row changed: logged dirty for the root bank, so its working tree is HEAD plus the log still. */
  const touchedKeys = new Set<string>()
  for (const leaf of changes) {
    const entries = new Map<string, string>()
    let removed = 0
    for (const [key, hash] of Object.entries(leaf.body)) {
      const to = fate.get(`${leaf.tbl}\u0000${hash}`)
      if (to !== undefined) touchedKeys.add(JSON.stringify([leaf.tbl, key]))
      if (to === undefined) entries.set(key, hash)
      else if (to === null) removed++
      else entries.set(key, to)
    }
    removedOf.set(leaf.lh, removed)
    if (entries.size === 0) {
      replaced.set(leaf.lh, null)
      continue
    }
    const hash = leafHashOf(entries)
    replaced.set(leaf.lh, hash)
    newObjects.push({ hash, kind: "bucket", body: Object.fromEntries(entries) })
  }
  const changedLeaves = [...replaced.keys()]
  const manifestBodies = new Map(
    (yield* run<{ hash: string; body: Record<string, string> }>(
      `SELECT hash, body FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [JSON.stringify([...new Set(manifests.map(([, hash]) => hash))])]
    )).map((row) => [row.hash, row.body])
  )
  // Found through the leaves' tops: matching every node's entries against the changed leaves took 3.8 s at 2k.
  const nodes = yield* run<{ hash: string; body: Record<string, string> }>(
    `SELECT hash, body FROM repo_objects WHERE kind = 'node' AND hash IN (
       SELECT top FROM purge_leaves WHERE top <> lh AND lh IN (SELECT jsonb_array_elements_text($1::jsonb)))`,
    [JSON.stringify(changedLeaves)]
  )
  for (const node of nodes) {
    const leaves = new Map<number, string>()
    let removed = 0
    for (const [number, leaf] of Object.entries(node.body)) {
      const to = replaced.has(leaf) ? replaced.get(leaf)! : leaf
      removed += removedOf.get(leaf) ?? 0
      if (to !== null) leaves.set(Number(number), to)
    }
    removedOf.set(node.hash, removed)
    if (leaves.size === 0) {
      replaced.set(node.hash, null)
      continue
    }
    const hash = nodeHashOf(leaves)
    replaced.set(node.hash, hash)
    newObjects.push({ hash, kind: "node", body: Object.fromEntries([...leaves].map(([n, h]) => [String(n), h])) })
  }
  for (const [, manifest] of manifests) {
    const body = manifestBodies.get(manifest)
    if (body === undefined) continue
    const buckets: Record<string, string> = {}
    let removed = 0
    let changed = false
    for (const [bucket, top] of Object.entries(body)) {
      const to = replaced.has(top) ? replaced.get(top)! : top
      if (to !== top) changed = true
      removed += removedOf.get(top) ?? 0
      if (to !== null) buckets[bucket] = to
    }
    if (!changed) continue
    removedOf.set(manifest, removed)
    if (Object.keys(buckets).length === 0) {
      replaced.set(manifest, null)
      continue
    }
    const hash = canonicalHash(buckets)
    replaced.set(manifest, hash)
    newObjects.push({ hash, kind: "table", body: buckets })
  }
  if (newObjects.length > 0) {
    yield* run(
      `INSERT INTO repo_objects (hash, kind, body, size_bytes)
       SELECT DISTINCT ON (e ->> 'hash') e ->> 'hash', e ->> 'kind', e -> 'body', octet_length((e -> 'body')::text)
       FROM jsonb_array_elements($1::jsonb) e ON CONFLICT (hash) DO NOTHING`,
      [JSON.stringify(newObjects)]
    )
  }

  // A row the history lost but the bank still holds (derived state the live forget keeps) must not fall out of the
  // next commit unseen: its key is logged, and status and commit compare it (a key whose row is gone stays clean).
  if (touchedKeys.size > 0) {
    yield* run(
      `INSERT INTO repo_dirty_keys (bank_id, table_name, k)
       SELECT $1, e ->> 0, e ->> 1 FROM jsonb_array_elements($2::jsonb) e ON CONFLICT DO NOTHING`,
      [bankId, `[${[...touchedKeys].join(",")}]`]
    )
  }

  /** A tree (and its row counts) with the replaced manifests; `changed` when any was. */
  const rewriteTree = (tables: Record<string, string>, counts: Record<string, number> | null) => {
    const next: Record<string, string> = {}
    const rows: Record<string, number> = { ...(counts ?? {}) }
    let changed = false
    for (const [table, hash] of Object.entries(tables)) {
      if (!replaced.has(hash)) {
        next[table] = hash
        continue
      }
      changed = true
      const to = replaced.get(hash)!
      if (to === null) delete rows[table]
      else {
        next[table] = to
        if (rows[table] !== undefined) rows[table] = Math.max(0, rows[table] - (removedOf.get(hash) ?? 0))
      }
    }
    return { tables: next, rows, changed }
  }

  // Commits, parents first: a commit whose tree or parent changed is stored again under a new id.
  const newIds = new Map<string, string>()
  const holding: Array<string> = []
  const byId = new Map(commits.map((c) => [c.commitId, c]))
  const visit = (commit: CommitRow): Effect.Effect<string, SqlError> =>
    Effect.gen(function*() {
      const done = newIds.get(commit.commitId)
      if (done !== undefined) return done
      const parentRow = commit.parentCommitId === null ? undefined : byId.get(commit.parentCommitId)
      const parent = parentRow === undefined ? commit.parentCommitId : yield* visit(parentRow)
      const tree = rewriteTree(commit.tables, commit.rowCounts)
      if (tree.changed) holding.push(commit.commitId)
      if (!tree.changed && parent === commit.parentCommitId) {
        newIds.set(commit.commitId, commit.commitId)
        return commit.commitId
      }
      const rootHash = rootHashOf(tree.tables)
      const id = rewrittenId(commit.commitId, rootHash, parent)
      yield* run(
        `INSERT INTO repo_commits (commit_id, repo_id, parent_commit_id, branch_name, message, actor, root_hash, tables,
           row_counts, bytes_added, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11)`,
        [
          id,
          repoId,
          parent,
          commit.branchName,
          commit.message,
          commit.actor,
          rootHash,
          JSON.stringify(tree.tables),
          JSON.stringify(tree.rows),
          Number(commit.bytesAdded),
          commit.createdAt
        ]
      )
      newIds.set(commit.commitId, id)
      return id
    })
  for (const commit of commits) yield* visit(commit)
  const rewrites = commits.flatMap((c) => {
    const to = newIds.get(c.commitId)!
    return to === c.commitId ? [] : [{ old_commit_id: c.commitId, new_commit_id: to }]
  })

  // Branch heads, stashes; read copies that held the content are dropped (the next read copies the new tree).
  let readCopiesDropped = 0
  const dropReadCopy = (copy: string) =>
    Effect.andThen(Effect.sync(() => readCopiesDropped++), dropHiddenBank(sql, copy))
  for (const { target_bank_id: copy } of copying) yield* dropReadCopy(copy)
  for (const branch of branches) {
    const head = branch.headCommitId === null ? null : newIds.get(branch.headCommitId) ?? branch.headCommitId
    const state = branch.stateTables === null ? null : rewriteTree(branch.stateTables, branch.stateRows)
    const replica = branch.replicaTables === null ? null : rewriteTree(branch.replicaTables, null)
    const dropCopy = replica !== null && replica.changed
    if (head === branch.headCommitId && (state === null || !state.changed) && !dropCopy) continue
    yield* run(
      `UPDATE repo_branches SET head_commit_id = $3, state_tables = $4::jsonb, state_rows = $5::jsonb,
         replica_tables = $6::jsonb, updated_at = now() WHERE repo_id = $1 AND branch_name = $2`,
      [
        repoId,
        branch.branchName,
        head,
        state === null ? null : JSON.stringify(state.tables),
        state === null ? null : JSON.stringify(state.rows),
        dropCopy ? null : branch.replicaTables === null ? null : JSON.stringify(branch.replicaTables)
      ]
    )
    const copy = branch.workspaceBankId
    if (dropCopy && copy !== bankId && copy.startsWith(workspacePrefix)) yield* dropReadCopy(copy)
  }
  const oldIds = rewrites.map((r) => r.old_commit_id)
  if (oldIds.length > 0) {
    yield* run(`DELETE FROM repo_commits WHERE commit_id IN (SELECT jsonb_array_elements_text($1::jsonb))`, [
      JSON.stringify(oldIds)
    ])
  }

  // The replaced objects go, unless another repo's trees (a fork with its own repo), a fork under way (it copies the
  // state it was asked for, this repo's old trees included: a bank forked before the forget is another bank) or an
  // enable in progress name them.
  const fresh = new Set([
    ...newObjects.map((o) => o.hash),
    ...goneRows.flatMap((row) => row.nh === null ? [] : [row.nh])
  ])
  const doomed = [...goneRows.map((row) => row.h), ...replaced.keys()].filter((hash) => !fresh.has(hash))
  const deleted = doomed.length === 0 ? [] : yield* run(
    `WITH d AS MATERIALIZED (SELECT DISTINCT jsonb_array_elements_text($1::jsonb) AS hash),
     foreign_trees AS MATERIALIZED (
       SELECT e.value AS hash FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e WHERE c.repo_id <> $2
       UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.state_tables, '{}'::jsonb)) e WHERE b.repo_id <> $2
       UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.replica_tables, '{}'::jsonb)) e WHERE b.repo_id <> $2
       UNION SELECT e.value FROM repo_forks f CROSS JOIN LATERAL jsonb_each_text(f.tables) e),
     foreign_tops AS MATERIALIZED (
       SELECT e.value AS hash FROM foreign_trees f JOIN repo_objects o ON o.hash = f.hash AND o.kind = 'table'
       CROSS JOIN LATERAL jsonb_each_text(o.body) e),
     foreign_leaves AS MATERIALIZED (
       SELECT hash FROM foreign_tops
       UNION SELECT e.value FROM foreign_tops t JOIN repo_objects o ON o.hash = t.hash AND o.kind = 'node'
       CROSS JOIN LATERAL jsonb_each_text(o.body) e),
     kept AS MATERIALIZED (
       SELECT hash FROM foreign_trees UNION SELECT hash FROM foreign_leaves
       UNION SELECT e.value FROM foreign_leaves l JOIN repo_objects o ON o.hash = l.hash AND o.kind = 'bucket'
         CROSS JOIN LATERAL jsonb_each_text(o.body) e WHERE e.value IN (SELECT hash FROM d)
       UNION SELECT h FROM repo_enable_rows WHERE h IN (SELECT hash FROM d))
     DELETE FROM repo_objects o WHERE o.hash IN (SELECT hash FROM d EXCEPT SELECT hash FROM kept)
     RETURNING o.hash`,
    [JSON.stringify(doomed), repoId]
  )
  return { holding, rewrites, objectsDeleted: deleted.length, readCopiesDropped } satisfies PurgeOutcome
})

/**
 * The read half of `purge_history` (`HistoryPurge.ts` writes it): in every tree a bank's memory repo holds — commits,
 * parked branches' stashed work, read copies — the rows of the forgotten memories and of what was derived from them,
 * and the leaves, nodes and table manifests that replace the ones holding them. Repo objects never change (they are
 * named by their hash), so the plan can be made outside any transaction, a bounded slice of leaves per statement with
 * `between` after each: on the embedded tier the one database session then goes to other requests between slices,
 * where a purge used to hold it for all of its reads (58.9 s at 10k memories). A plan says which trees it read
 * (`fingerprint`) and which memories it was asked about; the purge's transaction uses it only while both still hold
 * (`stillHolds`), and otherwise plans again inside the transaction. Must not log or return content. Longer than the
 * house's 300 lines on purpose: its passes share the leaves read first and the id sets each pass grows, and read in
 * order as one procedure; the trees' rebuild is `TreeRewrite.ts`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { PlacedObject } from "../../repos/NamedElsewhere.ts"
import { likePattern } from "./DerivedDeletion.ts"
import { withoutChunkTexts } from "./DocumentText.ts"
import { makeTreeRewrite, type RepoObject } from "./TreeRewrite.ts"

/** What the forget selected, live and by its selectors (matched again against the rows commits hold). */
export interface PurgeSelection {
  readonly memoryIds: ReadonlyArray<string>
  readonly entityIds: ReadonlyArray<string>
  /** Chunks and documents of the selected memories: gone from history where no kept memory of any tree uses them. */
  readonly chunkIds: ReadonlyArray<string>
  readonly documentIds: ReadonlyArray<string>
  readonly entity: string | null
  readonly requestedIds: ReadonlyArray<string>
  readonly documentId: string | null
  readonly tag: string | null
}

export interface CommitRow {
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

export interface BranchRow {
  readonly branchName: string
  readonly headCommitId: string | null
  readonly workspaceBankId: string
  readonly stateTables: Record<string, string> | null
  readonly stateRows: Record<string, number> | null
  readonly replicaTables: Record<string, string> | null
}

/** A repo's trees as one read saw them. */
export interface RepoTrees {
  readonly repoId: string
  readonly commits: ReadonlyArray<CommitRow>
  readonly branches: ReadonlyArray<BranchRow>
  /** Equal for two reads exactly when they name the same trees (commits never change; branches do). */
  readonly fingerprint: string
}

export type { RepoObject } from "./TreeRewrite.ts"

export interface PurgePlan {
  readonly selection: PurgeSelection
  readonly trees: RepoTrees
  /** Memory ids some tree's `memory_units` holds: a selection differing from the plan's only by others is covered. */
  readonly treeMemoryIds: ReadonlySet<string>
  /** Chunk and document ids some tree's memories name. */
  readonly treeChunkIds: ReadonlySet<string>
  readonly treeDocumentIds: ReadonlySet<string>
  /** Rows that go (`to` null) or are stored again changed (`to` its new hash), as `table\0hash`. */
  readonly fate: ReadonlyMap<string, string | null>
  /** Leaves, nodes and manifests replaced (null: emptied) and how many rows each lost. */
  readonly replaced: ReadonlyMap<string, string | null>
  readonly removedOf: ReadonlyMap<string, number>
  readonly newObjects: ReadonlyArray<RepoObject>
  /** The objects the rewritten trees no longer name (old rows, leaves, nodes, manifests), placed in their tables. */
  readonly replacedObjects: ReadonlyArray<PlacedObject>
  /** `[table, key]` of every committed row that changed: logged dirty for the root bank. */
  readonly touchedKeys: ReadonlyArray<readonly [string, string]>
}

/** Tables whose rows are matched by the forgotten entity's name in any string value (as forget matches them live). */
const namedTables = new Set([
  "dream_runs",
  "dream_predictions",
  "dream_proposals",
  "anomaly_events",
  "entity_intelligence",
  "mental_model_refreshes",
  "observation_history",
  "memory_unit_archive"
])
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
const purgedTables = new Set([...memoryTables, ...citingTables])

const list = (values: Iterable<string>) => JSON.stringify([...values])
const textArray = (param: string) => `ARRAY(SELECT jsonb_array_elements_text(${param}::jsonb))`
/** `value` is one of the JSON array `param`'s strings: a hashed lookup per row, not a walk of the array. */
const inList = (value: string, param: string) => `${value} IN (SELECT jsonb_array_elements_text(${param}::jsonb))`
const sortedJson = (values: ReadonlyArray<string>) => JSON.stringify([...values].sort())

/** The repo's commits and branches, read in the caller's transaction or on their own. */
export const readTrees = Effect.fn("Forgetting.readTrees")(function*(repoId: string) {
  const sql = yield* SqlClient.SqlClient
  const commits = yield* sql.unsafe<CommitRow>(
    `SELECT commit_id, parent_commit_id, branch_name, message, actor, tables, row_counts, bytes_added, created_at
     FROM repo_commits WHERE repo_id = $1 ORDER BY created_at, commit_id`,
    [repoId]
  )
  const branches = yield* sql.unsafe<BranchRow>(
    `SELECT branch_name, head_commit_id, workspace_bank_id, state_tables, state_rows, replica_tables
     FROM repo_branches WHERE repo_id = $1 ORDER BY branch_name`,
    [repoId]
  )
  const fingerprint = JSON.stringify([repoId, commits.map((c) => c.commitId), branches])
  return { repoId, commits, branches, fingerprint } satisfies RepoTrees
})

/**
 * Whether `plan` still answers a purge of `selection` over `trees`: the same trees, the same entities and selectors,
 * and memory, chunk and document ids that differ only by ones no tree holds (retained since the plan was made).
 */
export const stillHolds = (plan: PurgePlan, trees: RepoTrees, selection: PurgeSelection) => {
  const a = plan.selection
  const outsideTrees = (x: ReadonlyArray<string>, y: ReadonlyArray<string>, known: (id: string) => boolean) => {
    const left = new Set(x)
    const right = new Set(y)
    return [...x.filter((id) => !right.has(id)), ...y.filter((id) => !left.has(id))].every((id) => !known(id))
  }
  return plan.trees.fingerprint === trees.fingerprint &&
    sortedJson(a.entityIds) === sortedJson(selection.entityIds) &&
    sortedJson(a.requestedIds) === sortedJson(selection.requestedIds) &&
    a.entity === selection.entity && a.documentId === selection.documentId && a.tag === selection.tag &&
    outsideTrees(a.memoryIds, selection.memoryIds, (id) => plan.treeMemoryIds.has(id)) &&
    // A chunk or document no tree's memory names is not in any tree: memories are committed with their sources.
    outsideTrees(a.chunkIds, selection.chunkIds, (id) => plan.treeChunkIds.has(id)) &&
    outsideTrees(a.documentIds, selection.documentIds, (id) => plan.treeDocumentIds.has(id))
}

/**
 * About 2,000 rows a statement (60-150 ms of PGlite on a quiet machine at 2k memories: a memory row costs twice a
 * link's): another bank's statement waits for one slice at most. Sized by rows, not by time: a statement's time
 * includes its wait for the session, so under other banks' traffic time-sized slices shrank to a few leaves (a
 * 500-memory plan beside a busy bank took 3.3 s that way, 0.94 s sized by rows).
 */
const rowsPerSlice = 2_000

/** A statement per slice of `perSlice` items, `between` after each with the time it took. */
const sliced = <A>(
  items: ReadonlyArray<string>,
  perSlice: number,
  between: (heldMs: number) => Effect.Effect<void>,
  statement: (slice: string) => Effect.Effect<ReadonlyArray<A>, SqlError>
) =>
  Effect.gen(function*() {
    const out: Array<A> = []
    for (let start = 0; start < items.length; start += perSlice) {
      const began = performance.now()
      for (const row of yield* statement(JSON.stringify(items.slice(start, start + perSlice)))) out.push(row)
      yield* between(performance.now() - began)
    }
    return out
  })

/**
 * Plans the purge of `selection` from the memory repo of `bankId` (null: the bank has none, or it is still building
 * its first commit). Outside a transaction each slice is a statement of its own; inside one, pass `Effect.void`.
 */
export const planPurge = Effect.fn("Forgetting.planPurge")(function*(
  bankId: string,
  selection: PurgeSelection,
  between: (heldMs: number) => Effect.Effect<void>
) {
  const sql = yield* SqlClient.SqlClient
  const run = <A extends object = Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) =>
    sql.unsafe<A>(text, params)
  const repo = (yield* run<{ repoId: string; enableProgress: unknown }>(
    `SELECT repo_id, enable_progress FROM memory_repos WHERE root_bank_id = $1`,
    [bankId]
  ))[0]
  if (repo === undefined || repo.enableProgress !== null) return null
  const trees = yield* readTrees(repo.repoId)
  const manifests = [
    ...new Set(
      [
        ...trees.commits.map((c) => c.tables),
        ...trees.branches.flatMap((b) => [b.stateTables, b.replicaTables].filter((t) => t !== null))
      ].flatMap((tables) =>
        Object.entries(tables).filter(([table]) => purgedTables.has(table)).map(([table, hash]) =>
          `${table}\u0000${hash}`
        )
      )
    )
  ].map((pair) => pair.split("\u0000") as [string, string])

  /** A table's rows in the largest tree. */
  const rowsOf = (table: string) =>
    Math.max(
      0,
      ...trees.commits.map((c) => c.rowCounts[table] ?? 0),
      ...trees.branches.map((b) => b.stateRows?.[table] ?? 0)
    )
  // Each table's leaves with their tops: the node that names a leaf, or the leaf itself when a top bucket is a leaf.
  const manifestBodies = new Map(
    (yield* run<{ hash: string; body: Record<string, string> }>(
      `SELECT hash, body FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [list(new Set(manifests.map(([, hash]) => hash)))]
    )).map((row) => [row.hash, row.body])
  )
  const leafTops = new Map<string, Map<string, Set<string>>>()
  const addLeaf = (table: string, leaf: string, top: string) => {
    const leaves = leafTops.get(table) ?? new Map<string, Set<string>>()
    leafTops.set(table, leaves)
    const tops = leaves.get(leaf) ?? new Set<string>()
    leaves.set(leaf, tops)
    tops.add(top)
  }
  const topsOf = new Map<string, Set<string>>()
  for (const [table, hash] of manifests) {
    const tops = topsOf.get(table) ?? new Set<string>()
    topsOf.set(table, tops)
    for (const top of Object.values(manifestBodies.get(hash) ?? {})) tops.add(top)
  }
  for (const [table, tops] of topsOf) {
    // A node names up to 256 leaves, one per row while the table has fewer than 65,536 rows.
    const leavesPerTop = Math.min(256, Math.max(1, rowsOf(table) / 256))
    const read = yield* sliced(
      [...tops],
      Math.max(1, Math.floor(rowsPerSlice / leavesPerTop)),
      between,
      (slice) =>
        run<{ hash: string; kind: string; body: Record<string, string> | null }>(
          `SELECT hash, kind, CASE WHEN kind = 'node' THEN body END AS body FROM repo_objects
         WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
          [slice]
        )
    )
    for (const top of read) {
      if (top.kind === "bucket") addLeaf(table, top.hash, top.hash)
      else for (const leaf of Object.values(top.body ?? {})) addLeaf(table, leaf, top.hash)
    }
  }

  /**
   * The rows of `table`'s leaves matching `where`, with the leaf each is found in and `select`'s columns. Parameters
   * are `$1`… of `types` (typed whether `where` names them or not); the slice of leaves is the last.
   */
  const scan = <A extends object>(
    table: string,
    where: string,
    select: string,
    types: ReadonlyArray<string>,
    params: ReadonlyArray<unknown>
  ) => {
    const leaves = [...(leafTops.get(table)?.keys() ?? [])]
    // Rows a leaf holds, about: the table's rows in its largest tree over the leaves of all trees (at least).
    const perSlice = Math.max(1, Math.floor(rowsPerSlice / Math.max(1, rowsOf(table) / Math.max(1, leaves.length))))
    const slot = types.length + 1
    const typed = [...types.map((type, i) => `$${i + 1}::${type}`), `$${slot}::jsonb`].join(", ")
    return sliced(leaves, perSlice, between, (slice) =>
      run<A & { leaf: string; h: string }>(
        `WITH p AS (SELECT ${typed})
         SELECT DISTINCT lf.hash AS leaf, e.value AS h${select === "" ? "" : `, ${select}`}
         FROM repo_objects lf CROSS JOIN LATERAL jsonb_each_text(lf.body) e JOIN repo_objects o ON o.hash = e.value
         WHERE lf.hash IN (SELECT jsonb_array_elements_text($${slot}::jsonb)) AND (${where})`,
        [...params, slice]
      ))
  }
  const fate = new Map<string, string | null>()
  /** Rows found, by table then leaf: the leaves to rebuild. */
  const changedLeaves = new Map<string, Set<string>>()
  const goes = (table: string, rows: ReadonlyArray<{ leaf: string; h: string }>, to: (h: string) => string | null) => {
    for (const row of rows) {
      fate.set(`${table}\u0000${row.h}`, to(row.h))
      const leaves = changedLeaves.get(table) ?? new Set<string>()
      changedLeaves.set(table, leaves)
      leaves.add(row.leaf)
    }
  }

  // The entities the selectors name in any tree, besides the live ones.
  const entities = new Set(selection.entityIds)
  const pattern = selection.entity === null ? null : likePattern(selection.entity)
  if (selection.entity !== null) {
    const byName = (table: string, where: string, column: string) =>
      scan<{ v: string | null }>(table, where, `o.body ->> '${column}' AS v`, ["text"], [selection.entity])
    const named = [
      ...(yield* byName("entities", `lower(o.body ->> 'canonical_name') = lower($1)`, "id")),
      ...(yield* byName("entity_aliases", `lower(o.body ->> 'alias') = lower($1)`, "entity_id"))
    ]
    for (const row of named) if (row.v !== null) entities.add(row.v)
  }

  // Every memory row of every tree, once: the selectors, the observations built on them, and what stays.
  const memoryRows = yield* scan<
    { id: string; matched: boolean; sources: ReadonlyArray<string> | null; chunk: string | null; doc: string | null }
  >(
    "memory_units",
    "true",
    `o.body ->> 'id' AS id, o.body ->> 'chunk_id' AS chunk, o.body ->> 'document_id' AS doc,
     (($1 IS NOT NULL AND o.body ->> 'text' ILIKE $1) OR o.body ->> 'document_id' = $2
       OR ($3 IS NOT NULL AND coalesce(o.body -> 'tags', '[]'::jsonb) ? $3)) AS matched,
     CASE WHEN jsonb_typeof(o.body -> 'source_fact_ids') = 'array' AND o.body -> 'source_fact_ids' <> '[]'::jsonb
       THEN o.body -> 'source_fact_ids' END AS sources`,
    ["text", "text", "text"],
    [pattern, selection.documentId, selection.tag]
  )
  const memories = new Set([...selection.memoryIds, ...selection.requestedIds])
  for (const row of memoryRows) if (row.matched) memories.add(row.id)
  if (entities.size > 0) {
    for (
      const row of yield* scan<{ v: string }>(
        "unit_entities",
        inList(`o.body ->> 'entity_id'`, "$1"),
        `o.body ->> 'unit_id' AS v`,
        ["jsonb"],
        [list(entities)]
      )
    ) memories.add(row.v)
  }
  const archiveRows = yield* scan<{ id: string; matched: boolean; named: boolean }>(
    "memory_unit_archive",
    "true",
    `o.body ->> 'unit_id' AS id,
     (($1 IS NOT NULL AND (o.body -> 'unit' ->> 'text' ILIKE $1 OR EXISTS (
        SELECT 1 FROM jsonb_array_elements_text(coalesce(o.body -> 'entity_names', '[]'::jsonb)) n WHERE lower(n) = lower($2))))
       OR o.body -> 'unit' ->> 'document_id' = $3
       OR ($4 IS NOT NULL AND coalesce(o.body -> 'unit' -> 'tags', '[]'::jsonb) ? $4)) AS matched,
     ($1 IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_path_query(o.body, 'strict $.**') v
       WHERE jsonb_typeof(v) = 'string' AND (v #>> '{}') ILIKE $1)) AS named`,
    ["text", "text", "text", "text"],
    [pattern, selection.entity, selection.documentId, selection.tag]
  )
  for (const row of archiveRows) if (row.matched) memories.add(row.id)
  // Observations built on a forgotten fact go too (as forget releases them live), and those built on them.
  for (let grew = true; grew;) {
    grew = false
    for (const row of memoryRows) {
      if (row.sources === null || memories.has(row.id)) continue
      if (row.sources.some((id) => memories.has(id))) {
        memories.add(row.id)
        grew = true
      }
    }
  }

  // The rows that go, per table.
  goes("memory_units", memoryRows.filter((row) => memories.has(row.id)), () => null)
  goes("memory_unit_archive", archiveRows.filter((row) => memories.has(row.id) || row.named), () => null)
  const memory = (column: string) => inList(`o.body ->> '${column}'`, "$1")
  const entity = (column: string) => inList(`o.body ->> '${column}'`, "$2")
  const byIds = (table: string, where: string) =>
    Effect.flatMap(
      scan(table, where, "", ["jsonb", "jsonb"], [list(memories), list(entities)]),
      (rows) => Effect.sync(() => goes(table, rows, () => null))
    )
  yield* byIds("memory_links", `${memory("from_id")} OR ${memory("to_id")}`)
  yield* byIds("unit_entities", `${memory("unit_id")} OR ${entity("entity_id")}`)
  if (entities.size > 0) {
    yield* byIds("entities", entity("id"))
    yield* byIds("entity_aliases", entity("entity_id"))
    yield* byIds("entity_trajectories", entity("entity_id"))
  }
  const ids = [...memories, ...entities]
  const cites = `EXISTS (SELECT 1 FROM unnest(${textArray("$1")}) i WHERE strpos(o.body::text, i) > 0)`
  const names = `($2 IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_path_query(o.body, 'strict $.**') v
    WHERE jsonb_typeof(v) = 'string' AND (v #>> '{}') ILIKE $2))`
  for (const table of citingTables) {
    const where = namedTables.has(table) ? `${cites} OR ${names}` : cites
    goes(table, yield* scan(table, where, "", ["jsonb", "text"], [list(ids), pattern]), () => null)
  }

  // Chunks and documents that no kept memory of any tree uses any longer.
  const gone = (table: string, h: string) => fate.has(`${table}\u0000${h}`)
  const orphans = (column: "chunk" | "doc", extra: ReadonlyArray<string>) => {
    const candidates = new Set(extra)
    const kept = new Set<string>()
    for (const row of memoryRows) {
      const value = row[column]
      if (value === null) continue
      if (gone("memory_units", row.h)) candidates.add(value)
      else kept.add(value)
    }
    return [...candidates].filter((value) => !kept.has(value))
  }
  const chunkIds = orphans("chunk", selection.chunkIds)
  const documentIds = orphans("doc", [
    ...selection.documentIds,
    ...(selection.documentId === null ? [] : [selection.documentId])
  ])
  const goneChunks = chunkIds.length + documentIds.length === 0 ? [] : yield* scan<{ doc: string; text: string }>(
    "chunks",
    `${inList(`o.body ->> 'id'`, "$1")} OR ${inList(`o.body ->> 'document_id'`, "$2")}`,
    `o.body ->> 'document_id' AS doc, o.body ->> 'text' AS text`,
    ["jsonb", "jsonb"],
    [list(chunkIds), list(documentIds)]
  )
  goes("chunks", goneChunks, () => null)
  if (documentIds.length > 0) {
    goes(
      "documents",
      yield* scan(
        "documents",
        inList(`o.body ->> 'document_id'`, "$1"),
        "",
        ["jsonb"],
        [list(documentIds)]
      ),
      () => null
    )
  }

  // A document a tree keeps loses the pieces of its chunks that went, as the live forget rewrites the live text.
  // Rewritten rows are hashed as PostgreSQL prints their `jsonb`, so their bodies are made and printed there.
  const rewritten: Array<RepoObject> = []
  const rewrite = (table: string, rows: ReadonlyArray<{ leaf: string; h: string; nh: string; body: string }>) => {
    for (const row of rows) rewritten.push({ hash: row.nh, kind: "row", body: row.body })
    const next = new Map(rows.map((row) => [row.h, row.nh]))
    goes(table, rows, (h) => next.get(h)!)
  }
  // Each gone chunk's text once per document: a chunk found in several leaves (versions of its bucket) must not
  // take a second, kept occurrence of its text out.
  const piecesOf = new Map<string, Set<string>>()
  for (const chunk of goneChunks) {
    if (chunk.text === null) continue
    const pieces = piecesOf.get(chunk.doc) ?? new Set<string>()
    piecesOf.set(chunk.doc, pieces)
    pieces.add(chunk.text)
  }
  if (piecesOf.size > 0) {
    const kept = (yield* scan<{ text: string; doc: string }>(
      "documents",
      `o.body ->> 'original_text' IS NOT NULL AND ${inList(`o.body ->> 'document_id'`, "$1")}`,
      `o.body ->> 'original_text' AS text, o.body ->> 'document_id' AS doc`,
      ["jsonb"],
      [list(piecesOf.keys())]
    )).filter((row) => !gone("documents", row.h))
    const shortened = kept.flatMap((row) => {
      const rest = withoutChunkTexts(row.text, [...(piecesOf.get(row.doc) ?? [])])
      return rest === row.text ? [] : [{ leaf: row.leaf, h: row.h, text: rest }]
    })
    if (shortened.length > 0) {
      const bodies = new Map(
        (yield* run<{ h: string; nh: string; body: string }>(
          `SELECT DISTINCT o.hash AS h, encode(sha256(convert_to(s.body::text, 'UTF8')), 'hex') AS nh, s.body::text AS body
           FROM jsonb_array_elements($1::jsonb) e JOIN repo_objects o ON o.hash = e ->> 'h'
           CROSS JOIN LATERAL (SELECT o.body || jsonb_build_object('original_text', e ->> 'text') AS body) s`,
          [JSON.stringify(shortened.map(({ h, text }) => ({ h, text })))]
        )).map((row) => [row.h, row])
      )
      rewrite("documents", shortened.map((row) => ({ leaf: row.leaf, ...bodies.get(row.h)! })))
    }
  }
  // Mental models citing or naming it are kept emptied (as forget leaves them live).
  const emptied = `(o.body || '{"content": "", "reflect_response": null, "last_refreshed_at": null}'::jsonb)`
  rewrite(
    "mental_models",
    yield* scan<{ nh: string; body: string }>(
      "mental_models",
      `(${names} OR ${cites}) AND ${emptied} <> o.body`,
      `encode(sha256(convert_to(${emptied}::text, 'UTF8')), 'hex') AS nh, ${emptied}::text AS body`,
      ["jsonb", "text"],
      [list(memories), pattern]
    )
  )

  // New leaves without the rows (or with the changed ones); then the nodes above them, then table manifests.
  const rebuild = makeTreeRewrite(fate)
  const tableOfLeaf = new Map<string, string>()
  for (const [table, leaves] of changedLeaves) for (const leaf of leaves) tableOfLeaf.set(leaf, table)
  const readBodies = (hashes: ReadonlyArray<string>, perSlice: number) =>
    sliced(hashes, perSlice, between, (slice) =>
      run<{ hash: string; body: Record<string, string> }>(
        `SELECT hash, body FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
        [slice]
      ))
  for (const leaf of yield* readBodies([...tableOfLeaf.keys()], 2_000)) {
    rebuild.leaf(tableOfLeaf.get(leaf.hash)!, leaf.hash, leaf.body)
  }
  /** Each node above a changed leaf, with its table and a key under it (where it sits). */
  const nodesAbove = new Map<string, { readonly table: string; readonly key: string | null }>()
  for (const [table, leaves] of changedLeaves) {
    for (const leaf of leaves) {
      for (const top of leafTops.get(table)?.get(leaf) ?? []) {
        if (top !== leaf) nodesAbove.set(top, { table, key: rebuild.keyOf(leaf) })
      }
    }
  }
  for (const node of yield* readBodies([...nodesAbove.keys()], 40)) {
    const { key, table } = nodesAbove.get(node.hash)!
    rebuild.node(table, node.hash, node.body, key)
  }
  for (const [table, manifest] of manifests) {
    const body = manifestBodies.get(manifest)
    if (body !== undefined) rebuild.manifest(table, manifest, body)
  }
  const rebuilt = rebuild.result()

  const column = (name: "id" | "chunk" | "doc") =>
    new Set(memoryRows.flatMap((row) => row[name] === null ? [] : [row[name]!]))
  return {
    selection,
    trees,
    treeMemoryIds: column("id"),
    treeChunkIds: column("chunk"),
    treeDocumentIds: column("doc"),
    fate,
    ...rebuilt,
    newObjects: [...rewritten, ...rebuilt.newObjects]
  } satisfies PurgePlan
})

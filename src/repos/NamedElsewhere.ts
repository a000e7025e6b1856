/**
 * Which of a repo's objects, about to be deleted, a tree outside the repo still names: other repos' commits, their
 * branches' stashed work and read copies, and every fork under way (a fork copies the trees it was asked for, this
 * repo's too), and an enable's staged rows. Objects are shared by hash, so a fork made with its own repo names most of
 * its source's. Each object is looked up along its one path in each outside tree — a row lives in the leaf its key's
 * md5 buckets name, under the node of its top bucket — so the cost is what is deleted times the outside trees, never
 * the size of those trees (expanding them all took 0.97 s of a purge's 1.23 s transaction beside one other 2k repo).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bucketsOfKey } from "./WorkspaceTree.ts"

/** An object to delete and where it sits in its table's tree (a row by its key; a leaf or node by a key under it). */
export interface PlacedObject {
  readonly hash: string
  readonly table: string
  readonly level: "table" | "node" | "leaf" | "row"
  /** A key the object holds or lies on the path of; null for a table manifest. */
  readonly key: string | null
}

type Body = Readonly<Record<string, string>>

/** The hashes of `objects` that something outside `repoId` still names. */
export const namedElsewhere = Effect.fn("Repos.namedElsewhere")(function*(
  repoId: string,
  objects: ReadonlyArray<PlacedObject>
) {
  const sql = yield* SqlClient.SqlClient
  const named = new Set<string>()
  if (objects.length === 0) return named
  const staged = yield* sql.unsafe<{ h: string }>(
    `SELECT DISTINCT h FROM repo_enable_rows WHERE h IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify(objects.filter((o) => o.level === "row").map((o) => o.hash))]
  )
  for (const row of staged) named.add(row.h)
  const tables = [...new Set(objects.map((o) => o.table))]
  // Each outside tree's manifest of each table concerned.
  const trees = yield* sql.unsafe<{ tbl: string; hash: string }>(
    `WITH t AS (
       SELECT tables FROM repo_commits WHERE repo_id <> $1
       UNION ALL SELECT state_tables FROM repo_branches WHERE repo_id <> $1 AND state_tables IS NOT NULL
       UNION ALL SELECT replica_tables FROM repo_branches WHERE repo_id <> $1 AND replica_tables IS NOT NULL
       UNION ALL SELECT tables FROM repo_forks)
     SELECT DISTINCT e.key AS tbl, e.value AS hash FROM t CROSS JOIN LATERAL jsonb_each_text(t.tables) e
     WHERE e.key IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [repoId, JSON.stringify(tables)]
  )
  if (trees.length === 0) return named
  const manifestsOf = new Map<string, Array<string>>()
  for (const { hash, tbl } of trees) {
    const manifests = manifestsOf.get(tbl) ?? []
    manifestsOf.set(tbl, manifests)
    manifests.push(hash)
  }
  const outsideManifests = new Set(trees.map((t) => `${t.tbl}\u0000${t.hash}`))
  const bodies = new Map<string, { kind: string; body: Body }>()
  /** Reads the objects not read yet. */
  const read = (hashes: Iterable<string>) =>
    Effect.gen(function*() {
      const wanted = [...new Set(hashes)].filter((hash) => !bodies.has(hash))
      if (wanted.length === 0) return
      const rows = yield* sql.unsafe<{ hash: string; kind: string; body: Body }>(
        `SELECT hash, kind, body FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
        [JSON.stringify(wanted)]
      )
      for (const row of rows) bodies.set(row.hash, { kind: row.kind, body: row.body })
    })
  const placed = objects.map((o) => ({ ...o, at: o.key === null ? null : bucketsOfKey(o.key) }))
  // Down the paths a level at a time: manifests, then the tops at each object's top bucket, then its leaf.
  yield* read(trees.map((t) => t.hash))
  const topsOf = (o: (typeof placed)[number]) =>
    o.at === null ? [] : (manifestsOf.get(o.table) ?? []).flatMap((m) => {
      const top = bodies.get(m)?.body[String(o.at!.b)]
      return top === undefined ? [] : [top]
    })
  yield* read(placed.filter((o) => o.level === "row" || o.level === "leaf").flatMap(topsOf))
  /** The leaf on an object's path in each outside tree (a top that is a leaf is its own). */
  const leavesOf = (o: (typeof placed)[number]) =>
    topsOf(o).flatMap((top) => {
      const object = bodies.get(top)
      if (object === undefined) return []
      if (object.kind !== "node") return [top]
      const leaf = object.body[String(o.at!.b1)]
      return leaf === undefined ? [] : [leaf]
    })
  yield* read(placed.filter((o) => o.level === "row").flatMap(leavesOf))
  for (const o of placed) {
    const isNamed = o.level === "table"
      ? outsideManifests.has(`${o.table}\u0000${o.hash}`)
      : o.level === "node"
      ? topsOf(o).includes(o.hash)
      : o.level === "leaf"
      ? leavesOf(o).includes(o.hash)
      : leavesOf(o).some((leaf) => Object.values(bodies.get(leaf)?.body ?? {}).includes(o.hash))
    if (isNamed) named.add(o.hash)
  }
  return named
})

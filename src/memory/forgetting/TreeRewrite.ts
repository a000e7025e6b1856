/**
 * A memory repo's trees rebuilt without some rows (`purge_history`'s plan, `PurgePlan.ts`): each changed leaf without
 * the rows that go (or with their changed copies), then each node above a changed leaf, then each table manifest,
 * hashed exactly as a capture hashes them (so a later status or checkout sees no spurious change). Pure: the caller
 * reads the objects and hands them in, leaves first.
 */
import type { PlacedObject } from "../../repos/NamedElsewhere.ts"
import { canonicalHash } from "../../repos/Snapshots.ts"
import { leafHashOf, nodeHashOf } from "../../repos/WorkspaceTree.ts"

export interface RepoObject {
  readonly hash: string
  readonly kind: "row" | "bucket" | "node" | "table"
  /** JSON text: a row's as PostgreSQL prints its `jsonb` (its hash is of that text), the others' as built here. */
  readonly body: string
}

type Body = Readonly<Record<string, string>>

/** `fate`: per `table\0row hash`, null when the row goes, its new hash when a changed copy replaces it. */
export const makeTreeRewrite = (fate: ReadonlyMap<string, string | null>) => {
  /** Old leaf, node or manifest → its replacement (null: emptied), and how many rows each lost. */
  const replaced = new Map<string, string | null>()
  const removedOf = new Map<string, number>()
  const newObjects: Array<RepoObject> = []
  const placed = new Map<string, PlacedObject>()
  const touchedKeys = new Map<string, readonly [string, string]>()
  const keyOfLeaf = new Map<string, string>()
  const place = (hash: string, table: string, level: PlacedObject["level"], key: string | null) =>
    placed.set(`${table}\u0000${hash}`, { hash, table, level, key })
  const replace = (
    old: string,
    removed: number,
    next: { hash: string; kind: RepoObject["kind"]; body: string } | null
  ) => {
    removedOf.set(old, removed)
    replaced.set(old, next === null ? null : next.hash)
    if (next !== null) newObjects.push(next)
  }
  /** An entry's new target, after the objects below it were rebuilt. */
  const after = (hash: string) => replaced.has(hash) ? replaced.get(hash)! : hash

  return {
    leaf: (table: string, hash: string, body: Body) => {
      const entries = new Map<string, string>()
      let removed = 0
      const [anyKey] = Object.keys(body)
      if (anyKey !== undefined) keyOfLeaf.set(hash, anyKey)
      for (const [key, row] of Object.entries(body)) {
        const to = fate.get(`${table}\u0000${row}`)
        if (to === undefined) {
          entries.set(key, row)
          continue
        }
        // A committed row that changed: logged dirty for the root bank, so its working tree stays HEAD plus the log.
        touchedKeys.set(JSON.stringify([table, key]), [table, key])
        place(row, table, "row", key)
        if (to === null) removed++
        else entries.set(key, to)
      }
      place(hash, table, "leaf", anyKey ?? null)
      replace(
        hash,
        removed,
        entries.size === 0
          ? null
          : { hash: leafHashOf(entries), kind: "bucket", body: JSON.stringify(Object.fromEntries(entries)) }
      )
    },
    /** A key of a leaf handed in: where it, and the node above it, sit in the table's tree. */
    keyOf: (leaf: string) => keyOfLeaf.get(leaf) ?? null,
    node: (table: string, hash: string, body: Body, key: string | null) => {
      const leaves = new Map<number, string>()
      let removed = 0
      for (const [number, leaf] of Object.entries(body)) {
        const to = after(leaf)
        removed += removedOf.get(leaf) ?? 0
        if (to !== null) leaves.set(Number(number), to)
      }
      place(hash, table, "node", key)
      const entries = Object.fromEntries([...leaves].map(([n, h]) => [String(n), h]))
      replace(
        hash,
        removed,
        leaves.size === 0 ? null : { hash: nodeHashOf(leaves), kind: "node", body: JSON.stringify(entries) }
      )
    },
    /** A table manifest: rebuilt when a top it names was, otherwise left as it is. */
    manifest: (table: string, hash: string, body: Body) => {
      if (replaced.has(hash)) return
      const buckets: Record<string, string> = {}
      let removed = 0
      let changed = false
      for (const [bucket, top] of Object.entries(body)) {
        const to = after(top)
        if (to !== top) changed = true
        removed += removedOf.get(top) ?? 0
        if (to !== null) buckets[bucket] = to
      }
      if (!changed) return
      place(hash, table, "table", null)
      replace(
        hash,
        removed,
        Object.keys(buckets).length === 0
          ? null
          : { hash: canonicalHash(buckets), kind: "table", body: JSON.stringify(buckets) }
      )
    },
    result: () => ({
      replaced: replaced as ReadonlyMap<string, string | null>,
      removedOf: removedOf as ReadonlyMap<string, number>,
      newObjects: newObjects as ReadonlyArray<RepoObject>,
      replacedObjects: [...placed.values()],
      touchedKeys: [...touchedKeys.values()]
    })
  }
}

/**
 * Row-level difference between two states of a bank (a commit, or a live workspace): tables whose manifests
 * differ, then only the buckets whose hashes differ, then the rows in those buckets. Equal buckets are never
 * read, so a small change costs a few bucket reads however big the bank is. Reads only.
 */
import { Effect } from "effect"
import type { RowChange, TableDelta } from "../domain/Repo.ts"
import type { BucketMap, Capture, Snapshots, Source } from "./Snapshots.ts"

/** A commit's stored state, or a live bank read just now (with where to read its rows again). */
export type Side =
  | {
    readonly _tag: "Stored"
    readonly tables: Readonly<Record<string, string>>
    readonly rows: Readonly<Record<string, number>>
  }
  | { readonly _tag: "Live"; readonly capture: Capture; readonly source: Source }

export interface Difference {
  readonly changedComponents: ReadonlyArray<string>
  readonly tableDeltas: Record<string, TableDelta>
  readonly rows: ReadonlyArray<RowChange>
}

const hashOf = (side: Side, table: string) =>
  side._tag === "Stored" ? side.tables[table] : side.capture.tables[table]?.hash

const rowsOf = (side: Side, table: string) =>
  side._tag === "Stored" ? side.rows[table] ?? 0 : side.capture.tables[table]?.rows ?? 0

const tablesOf = (side: Side) => side._tag === "Stored" ? Object.keys(side.tables) : Object.keys(side.capture.tables)

/** The top-level bucket map of a table on one side. */
export const bucketsOf = (snapshots: Snapshots["Service"], side: Side, table: string): Effect.Effect<BucketMap> => {
  if (side._tag === "Live") return Effect.succeed(side.capture.tables[table]?.buckets ?? {})
  const hash = side.tables[table]
  return hash === undefined ? Effect.succeed({}) : snapshots.storedBuckets(hash)
}

/** key → row hash of the rows in some top buckets of a table on one side. */
export const entriesOf = (
  snapshots: Snapshots["Service"],
  side: Side,
  table: string,
  buckets: BucketMap,
  numbers: ReadonlyArray<string>
) =>
  side._tag === "Live"
    ? snapshots.liveEntries(side.source, table, numbers.filter((b) => buckets[b] !== undefined).map(Number))
    : snapshots.storedEntries(numbers.map((b) => buckets[b]).filter((h): h is string => h !== undefined))

/**
 * key → row hash on both sides for the top buckets `numbers`, keeping only the leaves whose hashes differ when both
 * sides are stored two-level trees: two commits a memory apart read a few nodes and leaves, not every leaf under
 * each changed top bucket (about a thousand rows each at 300k rows). Rows in equal leaves are equal on both sides,
 * so leaving them out changes no count.
 */
export const pairedEntries = (
  snapshots: Snapshots["Service"],
  left: Side,
  right: Side,
  table: string,
  lb: BucketMap,
  rb: BucketMap,
  numbers: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    if (left._tag === "Stored" && right._tag === "Stored") {
      const differing = yield* snapshots.differingLeaves(numbers.map((b) => [lb[b], rb[b]] as const))
      if (differing !== undefined) {
        const leaves = yield* snapshots.objects([...differing.left, ...differing.right])
        const entries = (hashes: ReadonlyArray<string>) =>
          new Map(hashes.flatMap((hash) => Object.entries(leaves.get(hash)?.body ?? {})))
        return [entries(differing.left), entries(differing.right)] as const
      }
    }
    return [
      yield* entriesOf(snapshots, left, table, lb, numbers),
      yield* entriesOf(snapshots, right, table, rb, numbers)
    ] as const
  })

export const tableHashOf = (side: Side, table: string) => hashOf(side, table)
export const tableNamesOf = (side: Side) => tablesOf(side)

/** Row changes are collected for at most this many rows per diff; counts are always complete. */
const maxListedRows = 100_000

export const diffSides = (
  snapshots: Snapshots["Service"],
  left: Side,
  right: Side,
  options: { readonly listRows: boolean; readonly table?: string | undefined }
) =>
  Effect.gen(function*() {
    const names = [...new Set([...tablesOf(left), ...tablesOf(right)])].sort()
    const changedComponents: Array<string> = []
    const tableDeltas: Record<string, TableDelta> = {}
    const rows: Array<RowChange> = []
    // Two stored trees: every table's differing rows in one statement (`Snapshots.treeDelta`).
    const batched = left._tag === "Stored" && right._tag === "Stored"
      ? yield* snapshots.treeDelta(names.map((table) => [table, left.tables[table], right.tables[table]] as const))
      : undefined
    for (const table of names) {
      if (hashOf(left, table) === hashOf(right, table)) continue
      changedComponents.push(table)
      const known = batched?.get(table)
      const [before, after] = known !== undefined ? [known.left, known.right] : yield* Effect.gen(function*() {
        const [lb, rb] = [yield* bucketsOf(snapshots, left, table), yield* bucketsOf(snapshots, right, table)]
        const numbers = [...new Set([...Object.keys(lb), ...Object.keys(rb)])].filter((b) => lb[b] !== rb[b])
        return yield* pairedEntries(snapshots, left, right, table, lb, rb, numbers)
      })
      let added = 0
      let removed = 0
      let changed = 0
      const listing = options.listRows && (options.table === undefined || options.table === table)
      const note = (key: string, change: RowChange["change"]) => {
        if (listing && rows.length < maxListedRows) rows.push({ table, key, change })
      }
      for (const [key, hash] of after) {
        const old = before.get(key)
        if (old === undefined) {
          added++
          note(key, "added")
        } else if (old !== hash) {
          changed++
          note(key, "changed")
        }
      }
      for (const key of before.keys()) {
        if (!after.has(key)) {
          removed++
          note(key, "removed")
        }
      }
      const [b, a] = [rowsOf(left, table), rowsOf(right, table)]
      tableDeltas[table] = { before: b, after: a, delta: a - b, added, removed, changed }
    }
    rows.sort((x, y) => x.table === y.table ? (x.key < y.key ? -1 : x.key > y.key ? 1 : 0) : x.table < y.table ? -1 : 1)
    return { changedComponents, tableDeltas, rows } satisfies Difference
  })

/**
 * The rows that differ between two states of a bank, keyed as the repo keys them, with the row hash on each
 * side: what an in-place checkout or reset must delete, update and insert. Found like a diff (equal tables and
 * equal top buckets are never read), so a small difference costs a few bucket reads however big the bank is.
 * Reads only; `Snapshots.applyDelta` writes.
 */
import { Effect } from "effect"
import { bucketsOf, entriesOf, pairedEntries, tableHashOf, tableNamesOf } from "./RepoDiff.ts"
import type { Side } from "./RepoDiff.ts"
import type { TableWrite } from "./RepoTypes.ts"
import type { BucketMap, Snapshots } from "./Snapshots.ts"

export interface TableChange {
  readonly table: string
  /** key → row hash before, for rows only the before side has. */
  readonly removed: ReadonlyArray<readonly [string, string]>
  /** key, row hash before, row hash after. */
  readonly changed: ReadonlyArray<readonly [string, string, string]>
  /** key → row hash after, for rows only the after side has. */
  readonly added: ReadonlyArray<readonly [string, string]>
  /** A table without a primary key is replaced whole: every row hash of each side. */
  readonly whole: { readonly before: ReadonlyArray<string>; readonly after: ReadonlyArray<string> } | null
}

export const rowDelta = (snapshots: Snapshots["Service"], before: Side, after: Side) =>
  Effect.gen(function*() {
    const plans = new Map((yield* snapshots.plans).map((plan) => [plan.name, plan]))
    const names = [...new Set([...tableNamesOf(before), ...tableNamesOf(after)])].sort()
    const changes: Array<TableChange> = []
    // Two stored trees: every keyed table's differing rows in one statement (`Snapshots.treeDelta`).
    const batched = before._tag === "Stored" && after._tag === "Stored"
      ? yield* snapshots.treeDelta(
        names.filter((table) => (plans.get(table)?.key ?? null) !== null).map((table) =>
          [table, before.tables[table], after.tables[table]] as const
        )
      )
      : undefined
    for (const table of names) {
      if (tableHashOf(before, table) === tableHashOf(after, table)) continue
      const plan = plans.get(table)
      if (plan === undefined) continue // a table a later migration dropped: nothing to write
      const known = plan.key === null ? undefined : batched?.get(table)
      const [lb, rb]: readonly [BucketMap, BucketMap] = known !== undefined
        ? [{}, {}]
        : [yield* bucketsOf(snapshots, before, table), yield* bucketsOf(snapshots, after, table)]
      if (plan.key === null) {
        const left = yield* entriesOf(snapshots, before, table, lb, Object.keys(lb))
        const right = yield* entriesOf(snapshots, after, table, rb, Object.keys(rb))
        changes.push({
          table,
          removed: [],
          changed: [],
          added: [],
          whole: { before: [...left.values()], after: [...right.values()] }
        })
        continue
      }
      const numbers = [...new Set([...Object.keys(lb), ...Object.keys(rb)])].filter((b) => lb[b] !== rb[b])
      const [left, right] = known !== undefined
        ? [known.left, known.right]
        : yield* pairedEntries(snapshots, before, after, table, lb, rb, numbers)
      const removed: Array<readonly [string, string]> = []
      const changed: Array<readonly [string, string, string]> = []
      const added: Array<readonly [string, string]> = []
      for (const [key, hash] of right) {
        const old = left.get(key)
        if (old === undefined) added.push([key, hash])
        else if (old !== hash) changed.push([key, old, hash])
      }
      for (const [key, hash] of left) if (!right.has(key)) removed.push([key, hash])
      if (removed.length + changed.length + added.length > 0) {
        changes.push({ table, removed, changed, added, whole: null })
      }
    }
    return changes
  })

/** The writes that turn a bank in the before state into the after state. */
export const forward = (changes: ReadonlyArray<TableChange>): ReadonlyArray<TableWrite> =>
  changes.map((c) => ({
    table: c.table,
    deleteKeys: c.removed.map(([key]) => key),
    update: c.changed.map(([, , after]) => after),
    insert: c.added.map(([, hash]) => hash),
    replace: c.whole === null ? null : c.whole.after
  }))

/** The writes that turn a bank in the after state back into the before state. */
export const backward = (changes: ReadonlyArray<TableChange>): ReadonlyArray<TableWrite> =>
  changes.map((c) => ({
    table: c.table,
    deleteKeys: c.added.map(([key]) => key),
    update: c.changed.map(([, before]) => before),
    insert: c.removed.map(([, hash]) => hash),
    replace: c.whole === null ? null : c.whole.before
  }))

export const rowsWritten = (writes: ReadonlyArray<TableWrite>) =>
  writes.reduce((sum, w) => sum + w.deleteKeys.length + w.update.length + w.insert.length + (w.replace?.length ?? 0), 0)

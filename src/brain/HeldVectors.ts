/**
 * A loaded brain's vectors lent to a writer: retain's nearest-neighbour search (near-duplicates and semantic links)
 * reads them in memory instead of asking the database's HNSW index, which was a tenth to a fifth of a retained item's
 * database work (`bench/write-cost.ts`). The brain stands at a position in the bank's writes (its marks); the writer
 * reads the tables' position in its transaction, in a statement it runs anyway (`bankPositionColumns`), and uses the
 * brain only when both are the same — then the brain holds exactly the memories the transaction sees. Otherwise (a
 * write not applied yet, another node's write, a rebuild) it searches in SQL as before.
 */
import type { SqlClient } from "effect/sql"
import type { MemoryRecords } from "./records/MemoryRecords.ts"

export interface Neighbour {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly similarity: number
}

export interface BankPosition {
  /** The highest `seq` among the bank's memories. */
  readonly seqMark: number
  /** The bank's last change-log entry (or just below its horizon). */
  readonly changeMark: number
}

export interface HeldVectors extends BankPosition {
  /**
   * The `depth` live memories of any type nearest to `query`, best first, as recall's semantic strategy finds them;
   * undefined once the brain has moved from the position it was lent at (a catch-up applied meanwhile).
   */
  readonly nearest: (query: Float32Array, depth: number) => ReadonlyArray<Neighbour> | undefined
}

/**
 * The bank's change mark: its last change-log entry, or just below its horizon when that is higher — a repo restore
 * moves the horizon past every entry (`Snapshots.invalidateBrains`), so every brain taken before it rebuilds, and one
 * built after it stands at that mark.
 */
export const bankChangeMark = (sql: SqlClient.SqlClient, bankId: string) =>
  sql`greatest(
    (SELECT coalesce(max(change_seq), 0) FROM memory_unit_changes WHERE bank_id = ${bankId}),
    (SELECT coalesce(max(pruned_below) - 1, 0) FROM memory_change_horizons WHERE bank_id = ${bankId}))::float8`

/** The bank's position as two columns of a select list, `seq_mark` and `change_mark` (two index lookups). */
export const bankPositionColumns = (sql: SqlClient.SqlClient, bankId: string) =>
  sql`(SELECT coalesce(max(seq), 0)::float8 FROM memory_units WHERE bank_id = ${bankId}) AS seq_mark,
    ${bankChangeMark(sql, bankId)} AS change_mark`

export const samePosition = (a: BankPosition, b: BankPosition): boolean =>
  a.seqMark === b.seqMark && a.changeMark === b.changeMark

/**
 * Lends `records` at `position`; `current` answers the brain's records and position now (both change as catch-ups
 * apply writes or a compaction swaps the records).
 */
export const lendVectors = (
  position: BankPosition,
  current: () => { readonly records: MemoryRecords; readonly position: BankPosition } | undefined
): HeldVectors => ({
  ...position,
  nearest: (query, depth) => {
    const now = current()
    if (now === undefined || !samePosition(now.position, position)) return undefined
    const { records } = now
    const scope = { types: records.factTypes, now: Date.now() }
    return records.nearest(query, scope, depth).map((hit) => {
      const record = records.get(hit.id)!
      return { id: hit.id, text: record.text, factType: record.factType, similarity: hit.score }
    })
  }
})

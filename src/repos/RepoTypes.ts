/**
 * Types the repo files share, kept apart so that the snapshot store, the diff and the row delta can each import them
 * without importing one another.
 */

/** What to do to one bank, per table: keys to delete, row hashes to update from and to insert. */
export interface TableWrite {
  readonly table: string
  readonly deleteKeys: ReadonlyArray<string>
  readonly update: ReadonlyArray<string>
  readonly insert: ReadonlyArray<string>
  /** Replace the bank's rows of the table by these (keyless tables). */
  readonly replace: ReadonlyArray<string> | null
}

/**
 * The files an import request has just unzipped and checked, handed to the import task that parses them in the
 * same process, so the task does not read the archive back from the database and unzip it a second time (a
 * second or more of a large import). The stored archive stays the source of truth: after a restart, on another
 * cluster node, or once an entry is evicted, the task reads it as before. Bounded by bytes and by age, because a
 * handoff that no task takes (the operation ran elsewhere, or was cancelled) must not hold memory for long.
 */
import type { ArchiveEntry } from "../../archives/ZipReader.ts"

interface Held {
  readonly entries: ReadonlyArray<ArchiveEntry>
  readonly bytes: number
  readonly heldAt: number
}

export interface SourceHandoff {
  readonly put: (snapshotId: string, entries: ReadonlyArray<ArchiveEntry>) => void
  /** The entries held for the snapshot, removed as they are taken; undefined when none are held or they aged out. */
  readonly take: (snapshotId: string) => ReadonlyArray<ArchiveEntry> | undefined
  readonly drop: (snapshotId: string) => void
}

export const makeSourceHandoff = (options: { readonly maxBytes: number; readonly maxAgeMs: number }): SourceHandoff => {
  const held = new Map<string, Held>()
  let total = 0
  const drop = (snapshotId: string) => {
    const entry = held.get(snapshotId)
    if (entry === undefined) return
    held.delete(snapshotId)
    total -= entry.bytes
  }
  const dropAged = (now: number) => {
    for (const [snapshotId, entry] of held) if (now - entry.heldAt > options.maxAgeMs) drop(snapshotId)
  }
  return {
    put: (snapshotId, entries) => {
      const bytes = entries.reduce((sum, entry) => sum + entry.bytes.byteLength, 0)
      if (bytes > options.maxBytes) return
      dropAged(Date.now())
      // Oldest first: a Map iterates in insertion order.
      for (const oldest of held.keys()) {
        if (total + bytes <= options.maxBytes) break
        drop(oldest)
      }
      held.set(snapshotId, { entries, bytes, heldAt: Date.now() })
      total += bytes
    },
    take: (snapshotId) => {
      const entry = held.get(snapshotId)
      drop(snapshotId)
      return entry === undefined || Date.now() - entry.heldAt > options.maxAgeMs ? undefined : entry.entries
    },
    drop
  }
}

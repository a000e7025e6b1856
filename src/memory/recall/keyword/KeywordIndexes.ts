/**
 * Each bank's in-memory keyword index, loaded on first use and kept current: memories appended since the last
 * use are added on the next search (one small query over the `(bank_id, seq)` index); removals and edits mark
 * it for a rebuild. Released when the bank's actor passivates. One refresh runs per bank at a time and callers
 * arriving meanwhile wait for it, so a burst of recalls after a retain reads the new rows once.
 */
import { Context, Effect, Layer, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import type { IndexedMemory } from "./KeywordIndex.ts"
import { KeywordIndex } from "./KeywordIndex.ts"

/** What a write did to the bank: only added memories, or changed or removed some. */
export type KeywordChange = "appended" | "changed"

/**
 * Appends re-read this many `seq` values before the last one indexed: two writers can commit out of `seq`
 * order, and a row committed late below the mark would otherwise be missed. Ids already indexed are skipped.
 */
const appendOverlap = 1000

interface Entry {
  index: KeywordIndex | undefined
  state: "fresh" | "append" | "rebuild"
  /** Bumped by every change, so a refresh that raced a write does not mark the index fresh. */
  version: number
  readonly lock: Semaphore.Semaphore
}

export class KeywordIndexes extends Context.Service<KeywordIndexes, {
  /** The bank's index, brought up to date first. */
  readonly get: (bankId: string) => Effect.Effect<KeywordIndex>
  readonly changed: (bankId: string, change: KeywordChange) => Effect.Effect<void>
  readonly drop: (bankId: string) => Effect.Effect<void>
  /** Bytes held by all indexes. */
  readonly size: Effect.Effect<number>
}>()("engram/memory/recall/keyword/KeywordIndexes") {
  static readonly layer = Layer.effect(
    KeywordIndexes,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const entries = new Map<string, Entry>()

      const rows = (bankId: string, afterSeq: number | undefined) =>
        sql<IndexedMemory>`
          SELECT id, seq::float8 AS seq, fact_type, tags, tsvector_to_array(search_text) AS lexemes
          FROM memory_units
          WHERE bank_id = ${bankId} ${afterSeq === undefined ? sql`` : sql`AND seq > ${afterSeq}`}
          ORDER BY seq`.pipe(Effect.orDie)

      const refresh = (bankId: string, entry: Entry) =>
        Effect.gen(function*() {
          const version = entry.version
          if (entry.index === undefined || entry.state === "rebuild") {
            entry.index = KeywordIndex.build(yield* rows(bankId, undefined))
          } else if (entry.state === "append") {
            entry.index.append(yield* rows(bankId, Math.max(0, entry.index.maxSeq - appendOverlap)))
          }
          if (entry.version === version) entry.state = "fresh"
          return entry.index
        }).pipe(Effect.withSpan("KeywordIndexes.refresh", { attributes: { bankId, state: entry.state } }))

      const entryOf = (bankId: string) => {
        let entry = entries.get(bankId)
        if (entry === undefined) {
          entry = { index: undefined, state: "rebuild", version: 0, lock: Semaphore.makeUnsafe(1) }
          entries.set(bankId, entry)
        }
        return entry
      }

      return KeywordIndexes.of({
        get: (bankId) =>
          Effect.suspend(() => {
            const entry = entryOf(bankId)
            if (entry.state === "fresh" && entry.index !== undefined) return Effect.succeed(entry.index)
            return entry.lock.withPermits(1)(
              Effect.suspend(() =>
                entry.state === "fresh" && entry.index !== undefined ? Effect.succeed(entry.index) : refresh(bankId, entry)
              )
            )
          }),
        changed: (bankId, change) =>
          Effect.sync(() => {
            const entry = entries.get(bankId)
            if (entry === undefined) return
            entry.version++
            if (change === "changed") entry.state = "rebuild"
            else if (entry.state === "fresh") entry.state = "append"
          }),
        drop: (bankId) => Effect.sync(() => void entries.delete(bankId)),
        size: Effect.sync(() => {
          let bytes = 0
          for (const entry of entries.values()) bytes += entry.index?.byteSize ?? 0
          return bytes
        })
      })
    })
  )
}

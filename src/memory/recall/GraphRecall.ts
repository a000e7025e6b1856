/**
 * The graph strategy: spreading activation from the best seed memories over the bank's graph snapshot
 * (entity, semantic, temporal and causal links), several hops with decay and a fan-out bound. The snapshot is
 * loaded lazily from the links table, rebuilt after the bank's memories change and released when idle.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Candidate } from "./Candidates.ts"
import { GraphSnapshots } from "./graph/GraphSnapshots.ts"
import type { KeywordChange } from "./keyword/KeywordIndexes.ts"
import { KeywordIndexes } from "./keyword/KeywordIndexes.ts"
import type { SpreadOptions } from "./graph/SpreadingActivation.ts"
import { spread } from "./graph/SpreadingActivation.ts"

/** Causal links carry the most meaning, then temporal neighbours (adjacent turns), then shared meaning or entities. */
export const graphSpreadOptions: SpreadOptions = {
  hops: 3,
  decay: 0.5,
  fanOut: 32,
  threshold: 0.005,
  typeWeights: { causes: 1, caused_by: 1, enables: 0.9, prevents: 0.9, temporal: 0.8, semantic: 0.6, entity: 0.5 }
}

export class GraphRecall extends Context.Service<GraphRecall, {
  /** Memories reached from the seeds, strongest first, seeds themselves left out. */
  readonly expand: (
    bankId: string,
    seeds: ReadonlyArray<{ readonly id: string; readonly activation: number }>,
    options: { readonly depth: number; readonly temporalOnly: boolean }
  ) => Effect.Effect<ReadonlyArray<Candidate>>
  /**
   * For each id, the memories retained just before and after it and joined to it by a temporal link (the
   * previous and next turn of a conversation), when there are such.
   */
  readonly adjacent: (
    bankId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, { readonly previous: string | undefined; readonly next: string | undefined }>>
  /**
   * The bank's memories or links changed: the next recall rebuilds its graph snapshot and brings its keyword
   * index up to date (`appended` when memories were only added, which the index can take incrementally).
   */
  readonly invalidate: (bankId: string, change?: KeywordChange) => Effect.Effect<void>
  /** Releases the bank's snapshot and keyword index (its actor passivated). */
  readonly drop: (bankId: string) => Effect.Effect<void>
}>()("engram/memory/recall/GraphRecall") {
  static readonly layer = Layer.effect(
    GraphRecall,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const snapshots = yield* GraphSnapshots
      const keywords = yield* KeywordIndexes

      // Positions numbered in SQL (retain order keeps a conversation's memories together in the arrays); one
      // repeatable-read transaction so the node list and the links describe the same moment.
      const load = (bankId: string) =>
        Effect.gen(function*() {
          yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
          const nodes = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId} ORDER BY seq`
          const links = yield* sql<{ fromIndex: number; toIndex: number; linkType: string; weight: number }>`
            WITH nodes AS (
              SELECT id, (row_number() OVER (ORDER BY seq) - 1)::int AS position
              FROM memory_units WHERE bank_id = ${bankId}
            )
            SELECT f.position AS from_index, t.position AS to_index, l.link_type, l.weight
            FROM memory_links l JOIN nodes f ON f.id = l.from_id JOIN nodes t ON t.id = l.to_id
            WHERE l.bank_id = ${bankId}`
          return {
            nodeIds: nodes.map((row) => row.id),
            indexedLinks: links.map((row) => ({ from: row.fromIndex, to: row.toIndex, linkType: row.linkType, weight: row.weight }))
          }
        }).pipe(sql.withTransaction, Effect.orDie)

      const expand = Effect.fn("GraphRecall.expand")(function*(
        bankId: string,
        seeds: ReadonlyArray<{ readonly id: string; readonly activation: number }>,
        options: { readonly depth: number; readonly temporalOnly: boolean }
      ) {
        if (seeds.length === 0) return []
        const snapshot = yield* snapshots.get(bankId, load(bankId))
        const top = Math.max(...seeds.map((seed) => seed.activation), 1e-9)
        const indexed = seeds
          .map((seed) => ({ index: snapshot.indexOf.get(seed.id), activation: seed.activation / top }))
          .filter((seed): seed is { index: number; activation: number } => seed.index !== undefined)
        const seedIndexes = new Set(indexed.map((seed) => seed.index))
        const result = spread(snapshot, indexed, {
          ...graphSpreadOptions,
          ...(options.temporalOnly ? { typeWeights: { temporal: 1, semantic: 0, entity: 0, causes: 0, caused_by: 0, enables: 0, prevents: 0 } } : {}),
          maxNodes: options.depth + indexed.length
        })
        const candidates: Array<Candidate> = []
        for (let i = 0; i < result.indices.length && candidates.length < options.depth; i++) {
          const index = result.indices[i]!
          if (!seedIndexes.has(index)) candidates.push({ id: snapshot.ids[index]!, score: result.activations[i]! })
        }
        return candidates
      })

      const adjacent = Effect.fn("GraphRecall.adjacent")(function*(bankId: string, ids: ReadonlyArray<string>) {
        const found = new Map<string, { previous: string | undefined; next: string | undefined }>()
        if (ids.length === 0) return found
        const snapshot = yield* snapshots.get(bankId, load(bankId))
        for (const id of ids) {
          const index = snapshot.indexOf.get(id)
          if (index === undefined) continue
          const previous = snapshot.adjacentInOrder(index, -1)
          const next = snapshot.adjacentInOrder(index, 1)
          found.set(id, {
            previous: previous < 0 ? undefined : snapshot.ids[previous],
            next: next < 0 ? undefined : snapshot.ids[next]
          })
        }
        return found
      })

      return GraphRecall.of({
        expand,
        adjacent,
        invalidate: (bankId, change = "changed") =>
          Effect.andThen(snapshots.invalidate(bankId), keywords.changed(bankId, change)),
        drop: (bankId) => Effect.andThen(snapshots.drop(bankId), keywords.drop(bankId))
      })
    })
  )
}

/**
 * The graph strategy: spreading activation from the best seed memories over the bank's graph (entity, semantic,
 * temporal and causal links), several hops with decay and a fan-out bound. The graph is part of the bank's brain
 * (`BankBrains`): built on first use, kept current with the bank's writes as deltas, released when idle.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { BankBrains, type Brain, type WriteDelta } from "../../brain/BankBrains.ts"
import type { Candidate } from "./Candidates.ts"
import type { SpreadOptions } from "../../brain/graph/SpreadingActivation.ts"
import { spread } from "../../brain/graph/SpreadingActivation.ts"

/**
 * Causal links carry the most meaning, then temporal neighbours (adjacent turns), then shared meaning or entities.
 * No minimum improvement: each memory gets its best path of at most three links, and what cannot make the result is
 * skipped in every round, not only the last (see "Pruning" in SpreadingActivation.ts).
 */
export const graphSpreadOptions: SpreadOptions = {
  hops: 3,
  decay: 0.5,
  fanOut: 32,
  threshold: 0.005,
  minImprovement: 0,
  typeWeights: { causes: 1, caused_by: 1, enables: 0.9, prevents: 0.9, temporal: 0.8, semantic: 0.6, entity: 0.5 }
}

export class GraphRecall extends Context.Service<GraphRecall, {
  /** Memories reached from the seeds, strongest first, seeds themselves left out. */
  readonly expand: (
    bankId: string,
    seeds: ReadonlyArray<{ readonly id: string; readonly activation: number }>,
    options: {
      readonly depth: number
      readonly temporalOnly: boolean
      /** The brain the caller holds; none (its breaker is open) finds nothing. Absent: the bank's current brain. */
      readonly brain?: Option.Option<Brain>
    }
  ) => Effect.Effect<ReadonlyArray<Candidate>>
  /**
   * For each id, the memories retained just before and after it and joined to it by a temporal link (the
   * previous and next turn of a conversation), when there are such.
   */
  readonly adjacent: (
    bankId: string,
    ids: ReadonlyArray<string>,
    brain?: Option.Option<Brain>
  ) => Effect.Effect<ReadonlyMap<string, { readonly previous: string | undefined; readonly next: string | undefined }>>
  /**
   * A write to the bank's memories or links committed: its brain (graph and keyword index) applies it as a delta.
   * Call it after the commit, for every write, whatever it changed.
   */
  readonly changed: (bankId: string) => Effect.Effect<void>
  /**
   * A write the caller committed and will acknowledge once this returns: its brain applies it before this returns,
   * and reads meanwhile do not wait for it (`BankBrains.applyWrite`).
   */
  readonly applyWrite: (bankId: string, written?: WriteDelta) => Effect.Effect<void>
  /**
   * Inside the writer's transaction, after its last write: what its commit adds to the bank's brain, for
   * `applyWrite` to apply with no read of its own (`BankBrains.deltaOfWrite`).
   */
  readonly deltaOfWrite: (bankId: string) => Effect.Effect<WriteDelta | undefined, SqlError>
}>()("engram/memory/recall/GraphRecall") {
  static readonly layer = Layer.effect(
    GraphRecall,
    Effect.gen(function*() {
      const brains = yield* BankBrains
      /** The graph of the brain the caller holds, else the bank's; none while its breaker is open (the graph adds nothing). */
      const graphOf = (bankId: string, brain: Option.Option<Brain> | undefined) =>
        Effect.map(
          brain === undefined ? brains.available(bankId) : Effect.succeed(brain),
          (held) => Option.isSome(held) ? held.value.graph : undefined
        )

      const expand = Effect.fn("GraphRecall.expand")(function*(
        bankId: string,
        seeds: ReadonlyArray<{ readonly id: string; readonly activation: number }>,
        options: { readonly depth: number; readonly temporalOnly: boolean; readonly brain?: Option.Option<Brain> }
      ) {
        if (seeds.length === 0) return []
        const snapshot = yield* graphOf(bankId, options.brain)
        if (snapshot === undefined) return []
        const top = Math.max(...seeds.map((seed) => seed.activation), 1e-9)
        const indexed = seeds
          .map((seed) => ({ index: snapshot.indexOf.get(seed.id), activation: seed.activation / top }))
          .filter((seed): seed is { index: number; activation: number } => seed.index !== undefined)
        const seedIndexes = new Set(indexed.map((seed) => seed.index))
        const result = spread(snapshot, indexed, {
          ...graphSpreadOptions,
          ...(options.temporalOnly
            ? { typeWeights: { temporal: 1, semantic: 0, entity: 0, causes: 0, caused_by: 0, enables: 0, prevents: 0 } }
            : {}),
          maxNodes: options.depth + indexed.length
        })
        const candidates: Array<Candidate> = []
        for (let i = 0; i < result.indices.length && candidates.length < options.depth; i++) {
          const index = result.indices[i]!
          if (!seedIndexes.has(index)) candidates.push({ id: snapshot.ids[index]!, score: result.activations[i]! })
        }
        return candidates
      })

      const adjacent = Effect.fn("GraphRecall.adjacent")(function*(
        bankId: string,
        ids: ReadonlyArray<string>,
        brain?: Option.Option<Brain>
      ) {
        const found = new Map<string, { previous: string | undefined; next: string | undefined }>()
        if (ids.length === 0) return found
        const snapshot = yield* graphOf(bankId, brain)
        if (snapshot === undefined) return found
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
        changed: brains.changed,
        applyWrite: brains.applyWrite,
        deltaOfWrite: brains.deltaOfWrite
      })
    })
  )
}

/**
 * A bank's brain: its graph (spreading activation, conversation context), its keyword index (BM25) and its memory
 * records (texts, times, filters, entities, chunks and vectors). Each part is kept current with the bank's writes as
 * a delta and compacted on its own schedule; `BankBrains` owns the lifecycle and `BrainReads` the SQL that feeds it.
 */
import type { LiveGraph } from "./graph/LiveGraph.ts"
import type { KeywordIndex } from "./keyword/KeywordIndex.ts"
import type { MemoryRecords } from "./records/MemoryRecords.ts"
import type { Sliced } from "./Sliced.ts"

export interface Brain {
  readonly graph: LiveGraph
  readonly keywords: KeywordIndex
  readonly records: MemoryRecords
}

/** Approximate bytes held by the brain's three parts. */
export const brainBytes = (brain: Brain): number =>
  brain.graph.byteSize + brain.keywords.byteSize + brain.records.byteSize

/**
 * Whether the delta or the tombstones of any part have grown past `share` of its base: then compaction pays for
 * itself (reads walk fewer merged lists and skip fewer dead slots).
 */
export const wantsCompaction = (brain: Brain, share: number): boolean =>
  brain.graph.deltaEdges > share * brain.graph.base.edgeCount + 4096 ||
  brain.graph.tombstones > share * brain.graph.nodeCount + 1024 ||
  brain.keywords.tombstones > share * brain.keywords.size + 1024 ||
  brain.records.tombstones > share * brain.records.size + 1024

/** The same brain without tombstones or delta, in slices (`Sliced.ts`): every part answers exactly as before. */
export function* compactingBrain(brain: Brain): Sliced<Brain> {
  return {
    graph: yield* brain.graph.compacting(),
    keywords: yield* brain.keywords.compacting(),
    records: yield* brain.records.compacting()
  }
}

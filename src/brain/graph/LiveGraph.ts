/**
 * A bank's graph as it is now: an immutable base `GraphSnapshot` plus what the bank's writes changed since it was
 * built — appended memories with their links (a small sorted adjacency list per touched node, the delta) and removed
 * memories (tombstones). Spreading activation reads it exactly as it would read a snapshot freshly built from the
 * bank's current rows: same edges, same order, same fan-out prefix. `compacted` folds the delta into a new base.
 * It never touches the database; `BankBrains` feeds it.
 */
import { every, runWhole, type Sliced } from "../Sliced.ts"
import type { LinkRow } from "./GraphSnapshot.ts"
import { GraphSnapshot, linkTypeCode, linkTypes, trimmed } from "./GraphSnapshot.ts"

/** One node's added edges, ordered like a snapshot's lists: weight descending, then target and type ascending. */
interface DeltaList {
  readonly targets: Array<number>
  readonly weights: Array<number>
  readonly types: Array<number>
}

/** Where `edgesOf` writes a node's merged edges. */
export interface EdgeBuffer {
  targets: Int32Array
  weights: Float32Array
  types: Uint8Array
}

export const makeEdgeBuffer = (room = 64): EdgeBuffer => ({
  targets: new Int32Array(room),
  weights: new Float32Array(room),
  types: new Uint8Array(room)
})

/** `a` before `b` in a snapshot's adjacency order. */
const before = (wa: number, ta: number, ca: number, wb: number, tb: number, cb: number) =>
  wa > wb || (wa === wb && (ta < tb || (ta === tb && ca < cb)))

const temporalCode = linkTypeCode("temporal")

export class LiveGraph {
  readonly base: GraphSnapshot
  readonly ids: Array<string>
  /** Live memories only: a removed memory leaves its position (a tombstone) but not this map. */
  readonly indexOf: Map<string, number>
  private removed: Uint8Array
  private removedCount = 0
  /**
   * Memories whose links were rewritten since the base (a curated text is linked anew): every base edge with one of
   * them at either end is ignored, and their current links all live in the delta (`detach`, then `addLinks`).
   */
  private detached: Uint8Array
  private detachedCount = 0
  private readonly delta = new Map<number, DeltaList>()
  private deltaEdgeCount = 0
  /** The greatest weight ever added to the delta (an upper bound: a removed edge's weight is not taken back). */
  private strongestDeltaWeight = 0
  /**
   * Set when a new link repeats a base edge with a greater weight: a fresh build would keep the stronger copy,
   * which the delta cannot express, so the owner must compact before the next read. Writers never do this today
   * (every link has a memory newer than the base at one end); the flag keeps the equivalence unconditional.
   */
  needsCompaction = false

  /** `own`: copies of the base's ids and index for this graph to change (the base is shared, and never changes). */
  private constructor(
    base: GraphSnapshot,
    own: { readonly ids: Array<string>; readonly indexOf: Map<string, number> }
  ) {
    this.base = base
    this.ids = own.ids
    this.indexOf = own.indexOf
    this.removed = new Uint8Array(Math.max(16, base.nodeCount))
    this.detached = new Uint8Array(this.removed.length)
  }

  static of(base: GraphSnapshot): LiveGraph {
    return runWhole(LiveGraph.ofSliced(base))
  }

  /**
   * `of` in slices (`Sliced.ts`): copying a 100k-memory snapshot's ids and index took 30–56 ms in one piece on a quiet
   * machine, after every build, file load and import of a big bank.
   */
  static *ofSliced(base: GraphSnapshot): Sliced<LiveGraph> {
    const ids: Array<string> = []
    const indexOf = new Map<string, number>()
    const pause = every(20_000)
    for (const id of base.ids) {
      ids.push(id)
      if (pause()) yield
    }
    for (const [id, index] of base.indexOf) {
      indexOf.set(id, index)
      if (pause()) yield
    }
    return new LiveGraph(base, { ids, indexOf })
  }

  /** Positions, tombstones included (what per-node arrays must be sized for). */
  get nodeCount(): number {
    return this.ids.length
  }

  get liveNodeCount(): number {
    return this.ids.length - this.removedCount
  }

  get tombstones(): number {
    return this.removedCount
  }

  /** Directed edges in the delta (each added link counts once from each end). */
  get deltaEdges(): number {
    return this.deltaEdgeCount
  }

  /** No edge weighs more than this (the base's strongest, or a stronger one added since). */
  get strongestWeight(): number {
    return Math.max(this.base.strongestWeight, this.strongestDeltaWeight)
  }

  /** Nothing changed since the base was built: readers may use the base snapshot directly. */
  get isBase(): boolean {
    return this.removedCount === 0 && this.detachedCount === 0 && this.delta.size === 0 &&
      this.ids.length === this.base.nodeCount
  }

  isRemoved(index: number): boolean {
    return this.removed[index] === 1
  }

  /**
   * Node `u`'s live edges are its base list minus the edges to gaps (`isGap`): it has no delta list and was not
   * detached. Spreading activation then reads the base arrays in place instead of merging a copy (`edgesOf`):
   * after a few writes most of a bank's nodes are like this, and copying their edges made a recall's spread five
   * times dearer than on the snapshot.
   */
  readsBase(u: number): boolean {
    return u < this.base.nodeCount && this.detached[u] !== 1 && !this.delta.has(u)
  }

  /** Some base edge ends at a gap: a tombstone or a detached memory. */
  get hasGaps(): boolean {
    return this.removedCount > 0 || this.detachedCount > 0
  }

  /** A base edge to `v` does not count: `v` was removed, or detached (its links are in the delta). */
  isGap(v: number): boolean {
    return this.removed[v] === 1 || this.detached[v] === 1
  }

  /** Appends memories not in the graph yet, in the given (retain) order. */
  appendNodes(ids: Iterable<string>): void {
    for (const id of ids) {
      if (this.indexOf.has(id)) continue
      this.indexOf.set(id, this.ids.length)
      this.ids.push(id)
    }
    if (this.removed.length < this.ids.length) {
      const larger = new Uint8Array(Math.max(this.ids.length, this.removed.length * 2))
      larger.set(this.removed)
      this.removed = larger
      const detached = new Uint8Array(larger.length)
      detached.set(this.detached)
      this.detached = detached
    }
  }

  /** Adds links by memory id, with the snapshot's rules: unknown or removed ends, self-links and bad weights are left out. */
  addLinks(links: Iterable<LinkRow>): void {
    for (const link of links) {
      const a = this.indexOf.get(link.fromId)
      const b = this.indexOf.get(link.toId)
      if (a === undefined || b === undefined || a === b) continue
      const weight = Math.fround(link.weight)
      if (!(link.weight > 0 && link.weight < Infinity)) continue
      const code = linkTypeCode(link.linkType)
      if (this.insert(a, b, weight, code)) this.insert(b, a, weight, code)
    }
  }

  /**
   * Drops every link of these memories, base and delta, from both ends: the caller then adds their links as the
   * database holds them now (`addLinks`), so a memory whose links were derived anew (a curated text) reads exactly
   * as a fresh build would read it, in the same position. Unknown or removed ids are skipped.
   */
  detach(ids: Iterable<string>): void {
    for (const id of ids) {
      const u = this.indexOf.get(id)
      if (u === undefined) continue
      if (this.detached[u] !== 1) {
        this.detached[u] = 1
        this.detachedCount++
      }
      const list = this.delta.get(u)
      if (list === undefined) continue
      for (const v of new Set(list.targets)) {
        const other = this.delta.get(v)
        if (other === undefined) continue
        for (let i = other.targets.length - 1; i >= 0; i--) {
          if (other.targets[i] !== u) continue
          other.targets.splice(i, 1)
          other.weights.splice(i, 1)
          other.types.splice(i, 1)
          this.deltaEdgeCount--
        }
        if (other.targets.length === 0) this.delta.delete(v)
      }
      this.deltaEdgeCount -= list.targets.length
      this.delta.delete(u)
    }
  }

  /** A base edge still counts: neither end was detached since the base was built. */
  private baseEdgeLive(u: number, v: number): boolean {
    return this.detachedCount === 0 || (this.detached[u] !== 1 && this.detached[v] !== 1)
  }

  /** Inserts one directed edge in order; false when a copy at least as strong is already there. */
  private insert(u: number, v: number, weight: number, code: number): boolean {
    if (u < this.base.nodeCount && this.baseEdgeLive(u, v)) {
      for (let e = this.base.offsets[u]!; e < this.base.offsets[u + 1]!; e++) {
        if (this.base.targets[e] !== v || this.base.types[e] !== code) continue
        if (this.base.weights[e]! >= weight) return false
        this.needsCompaction = true
      }
    }
    let list = this.delta.get(u)
    if (list === undefined) {
      list = { targets: [], weights: [], types: [] }
      this.delta.set(u, list)
    }
    for (let i = 0; i < list.targets.length; i++) {
      if (list.targets[i] !== v || list.types[i] !== code) continue
      if (list.weights[i]! >= weight) return false
      list.targets.splice(i, 1)
      list.weights.splice(i, 1)
      list.types.splice(i, 1)
      this.deltaEdgeCount--
      break
    }
    let at = list.targets.length
    while (at > 0 && before(weight, v, code, list.weights[at - 1]!, list.targets[at - 1]!, list.types[at - 1]!)) at--
    list.targets.splice(at, 0, v)
    list.weights.splice(at, 0, weight)
    list.types.splice(at, 0, code)
    this.deltaEdgeCount++
    if (weight > this.strongestDeltaWeight) this.strongestDeltaWeight = weight
    return true
  }

  /** Tombstones a memory: it is no longer a seed, a target or a neighbour. False when it is not in the graph. */
  remove(id: string): boolean {
    const index = this.indexOf.get(id)
    if (index === undefined) return false
    this.indexOf.delete(id)
    this.removed[index] = 1
    this.removedCount++
    return true
  }

  /**
   * Writes node `u`'s live edges in adjacency order — the base list and the delta list merged, tombstoned targets
   * left out — into `buffer`, at most `limit` of them (the fan-out prefix), and none weighing less than `minWeight`
   * (the list is strongest first: spreading activation stops there anyway, so the merge stops too). Returns how many;
   * grows the buffer.
   */
  edgesOf(u: number, limit: number, buffer: EdgeBuffer, minWeight = 0): number {
    const base = this.base
    let e = u < base.nodeCount ? base.offsets[u]! : 0
    const baseEnd = u < base.nodeCount ? base.offsets[u + 1]! : 0
    const list = this.delta.get(u)
    const deltaLength = list === undefined ? 0 : list.targets.length
    let d = 0
    let count = 0
    while (count < limit && (e < baseEnd || d < deltaLength)) {
      let target: number
      let weight: number
      let code: number
      const takeBase = d >= deltaLength || (e < baseEnd &&
        before(
          base.weights[e]!,
          base.targets[e]!,
          base.types[e]!,
          list!.weights[d]!,
          list!.targets[d]!,
          list!.types[d]!
        ))
      if (takeBase) {
        target = base.targets[e]!
        weight = base.weights[e]!
        code = base.types[e]!
        e++
      } else {
        target = list!.targets[d]!
        weight = list!.weights[d]!
        code = list!.types[d]!
        d++
      }
      if (weight < minWeight) break
      if (this.removed[target] === 1) continue
      if (takeBase && !this.baseEdgeLive(u, target)) continue
      if (count === buffer.targets.length) growBuffer(buffer)
      buffer.targets[count] = target
      buffer.weights[count] = weight
      buffer.types[count] = code
      count++
    }
    return count
  }

  /**
   * The live memory retained just after (`step` 1) or before (-1) `index`, when a temporal link joins them, or
   * -1: the same answer `GraphSnapshot.adjacentInOrder` gives on a fresh build, where tombstones do not exist.
   */
  adjacentInOrder(index: number, step: 1 | -1): number {
    let target = index + step
    while (target >= 0 && target < this.ids.length && this.removed[target] === 1) target += step
    if (target < 0 || target >= this.ids.length) return -1
    const base = this.base
    if (index < base.nodeCount) {
      for (let e = base.offsets[index]!; e < base.offsets[index + 1]!; e++) {
        if (base.targets[e] === target && base.types[e] === temporalCode && this.baseEdgeLive(index, target)) {
          return target
        }
      }
    }
    const list = this.delta.get(index)
    if (list !== undefined) {
      for (let i = 0; i < list.targets.length; i++) {
        if (list.targets[i] === target && list.types[i] === temporalCode) return target
      }
    }
    return -1
  }

  /**
   * A new base holding exactly the live graph (same node order, so the same results), with an empty delta. Each
   * node's base and delta lists are merged as `edgesOf` reads them (renumbering skips tombstones and keeps the
   * order), so nothing is sorted again: linear in the edges.
   */
  compacted(): LiveGraph {
    return runWhole(this.compacting())
  }

  /** `compacted` in slices (`Sliced.ts`): 1.4 s in one piece at 100k memories and 2.7M links. */
  *compacting(): Sliced<LiveGraph> {
    if (this.needsCompaction) return yield* this.rebuilding()
    const started = performance.now()
    const nodeIds: Array<string> = []
    // Each id's new position, kept as the snapshot's index: built here in steps, not again in one piece at the end.
    const indexOf = new Map<string, number>()
    // The compacted graph's own copies (the snapshot's stay as they are), made in the same steps.
    const own = { ids: [] as Array<string>, indexOf: new Map<string, number>() }
    const newIndex = new Int32Array(this.ids.length).fill(-1)
    const pause = every(50_000)
    for (let i = 0; i < this.ids.length; i++) {
      if (this.removed[i] === 1) continue
      newIndex[i] = nodeIds.length
      indexOf.set(this.ids[i]!, nodeIds.length)
      own.indexOf.set(this.ids[i]!, nodeIds.length)
      own.ids.push(this.ids[i]!)
      nodeIds.push(this.ids[i]!)
      if (pause(2)) yield
    }
    const offsets = new Int32Array(nodeIds.length + 1)
    // Every live edge is a base edge or a delta edge: their counts bound the total.
    const room = this.base.edgeCount + this.deltaEdgeCount
    const targets = new Int32Array(room)
    const weights = new Float32Array(room)
    const types = new Uint8Array(room)
    const buffer = makeEdgeBuffer()
    let write = 0
    for (let u = 0; u < this.ids.length; u++) {
      const position = newIndex[u]!
      if (position < 0) continue
      if (pause(this.degreeHint(u))) yield
      offsets[position] = write
      const count = this.edgesOf(u, Infinity, buffer)
      for (let k = 0; k < count; k++) {
        targets[write] = newIndex[buffer.targets[k]!]!
        weights[write] = buffer.weights[k]!
        types[write] = buffer.types[k]!
        write++
      }
    }
    offsets[nodeIds.length] = write
    yield
    // Removed edges leave room unused (see `trimmed`).
    const adjacency = {
      offsets,
      targets: trimmed(targets, write),
      weights: trimmed(weights, write),
      types: trimmed(types, write)
    }
    return new LiveGraph(
      GraphSnapshot.fromAdjacency(nodeIds, adjacency, performance.now() - started, { indexOf, droppedLinks: 0 }),
      own
    )
  }

  /** About how many edges node `u` has (base list plus delta), to pace slices. */
  private degreeHint(u: number): number {
    const base = u < this.base.nodeCount ? this.base.offsets[u + 1]! - this.base.offsets[u]! : 0
    return base + (this.delta.get(u)?.targets.length ?? 0) + 1
  }

  /**
   * The live graph built again from its links (where a repeated link must keep only its stronger copy), in slices:
   * it gathered every live link of the bank as an object first and built in one piece, about 1.8M links at 100k.
   */
  private *rebuilding(): Sliced<LiveGraph> {
    const nodeIds: Array<string> = []
    const newIndex = new Int32Array(this.ids.length).fill(-1)
    for (let i = 0; i < this.ids.length; i++) {
      if (this.removed[i] === 1) continue
      newIndex[i] = nodeIds.length
      nodeIds.push(this.ids[i]!)
    }
    // What `GraphSnapshot.build` does with a list of indexed links, fed one link at a time.
    const builder = GraphSnapshot.builder(nodeIds)
    const keep = (u: number, v: number, weight: number, code: number) => {
      // Each link sits in both ends' lists: keep it once, from its lower end.
      if (u < v && newIndex[v]! >= 0) builder.add(newIndex[u]!, newIndex[v]!, linkTypes[code]!, weight)
    }
    const base = this.base
    const pause = every(50_000)
    for (let u = 0; u < this.ids.length; u++) {
      if (newIndex[u]! < 0) continue
      if (pause(this.degreeHint(u))) yield
      if (u < base.nodeCount) {
        for (let e = base.offsets[u]!; e < base.offsets[u + 1]!; e++) {
          if (this.baseEdgeLive(u, base.targets[e]!)) keep(u, base.targets[e]!, base.weights[e]!, base.types[e]!)
        }
      }
      const list = this.delta.get(u)
      if (list !== undefined) {
        for (let i = 0; i < list.targets.length; i++) keep(u, list.targets[i]!, list.weights[i]!, list.types[i]!)
      }
    }
    return yield* LiveGraph.ofSliced(yield* builder.finishing())
  }

  /** Bytes held: the base snapshot, the tombstone flags and the delta lists (estimated at 8 bytes a number). */
  get byteSize(): number {
    return this.base.byteSize + this.removed.byteLength + this.detached.byteLength + this.deltaEdgeCount * 24 +
      this.delta.size * 96 +
      (this.ids.length - this.base.nodeCount) * 112
  }
}

const growBuffer = (buffer: EdgeBuffer) => {
  const room = buffer.targets.length * 2
  const targets = new Int32Array(room)
  const weights = new Float32Array(room)
  const types = new Uint8Array(room)
  targets.set(buffer.targets)
  weights.set(buffer.weights)
  types.set(buffer.types)
  buffer.targets = targets
  buffer.weights = weights
  buffer.types = types
}

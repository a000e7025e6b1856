/**
 * One bank's memory graph as an immutable compressed-sparse-row adjacency over typed arrays, the input of
 * spreading activation. It is built from `memory_links` rows the caller reads — all at once (`build`) or page by
 * page (`builder`) — and never touches the database; it is never mutated once built (`LiveGraph` layers a bank's
 * later writes over it).
 */
import { every, runWhole, type Sliced } from "../Sliced.ts"

/** Link types by their code in `types`; anything the writer adds later is kept as `other`. */
export const linkTypes = [
  "temporal",
  "semantic",
  "entity",
  "causes",
  "caused_by",
  "enables",
  "prevents",
  "other"
] as const
export type LinkType = typeof linkTypes[number]

const codes = new Map<string, number>(linkTypes.map((name, code) => [name, code]))
const otherCode = linkTypes.length - 1
const temporalCode = 0

/** The code stored in `types` for a `link_type` value. */
export const linkTypeCode = (linkType: string): number => codes.get(linkType) ?? otherCode

/** A per-type multiplier table indexed by link type code; types not named get `fallback`. */
export const typeTable = (factors: Partial<Record<LinkType, number>> | undefined, fallback: number): Float64Array => {
  const table = new Float64Array(linkTypes.length).fill(fallback)
  if (factors !== undefined) {
    for (let code = 0; code < linkTypes.length; code++) {
      const factor = factors[linkTypes[code]!]
      if (factor !== undefined) table[code] = factor
    }
  }
  return table
}

/** One row of `memory_links`. Stored once in one direction; the snapshot treats it as undirected. */
export interface LinkRow {
  readonly fromId: string
  readonly toId: string
  readonly linkType: string
  readonly weight: number
}

/** A link whose endpoints are positions in `nodeIds` (see `IndexedGraphSource`). */
export interface IndexedLinkRow {
  readonly from: number
  readonly to: number
  readonly linkType: string
  readonly weight: number
}

/**
 * What a snapshot is built from: the bank's memory ids and its links, either by id or by position in `nodeIds`.
 * Node order is index order: load them in a stable order (by `seq`, so a conversation's memories sit together
 * in memory, which the spreading loop feels) for stable results. Prefer positions for large banks: resolving
 * ids in JavaScript costs about a microsecond a link once the map outgrows the cache, where the database can
 * number the nodes in its join (`row_number() OVER (ORDER BY seq)`) for nothing.
 */
export type GraphSource = {
  readonly nodeIds: ReadonlyArray<string>
  readonly links: ReadonlyArray<LinkRow>
} | IndexedGraphSource

/** `nodeIds` must be distinct here: links refer to their positions. */
export interface IndexedGraphSource {
  readonly nodeIds: ReadonlyArray<string>
  readonly indexedLinks: ReadonlyArray<IndexedLinkRow>
}

export interface BuildOptions {
  /** Multiplies the stored weight of each link type (default 1); a factor of 0 leaves that type out. */
  readonly typeFactors?: Partial<Record<LinkType, number>>
}

/** Insertion sort is faster than a comparator sort on the short adjacency lists most nodes have. */
const insertionSortLimit = 24

/**
 * The adjacency of node `i` is `targets/weights/types[offsets[i] .. offsets[i + 1])`, ordered by weight
 * descending (ties: target index, then type code, ascending), so "the strongest k neighbours" is a prefix.
 *
 * Building rules, all deterministic for a given `nodeIds` order whatever the order of the links:
 * - every link becomes two directed edges; a link whose endpoint is not a node, a self-link and a link whose
 *   weight times its type factor is not a positive finite number are left out (counted in `droppedLinks`);
 * - a node id listed twice in `nodeIds` counts once (with links by position it is an error);
 * - links between the same two nodes are kept once per type (different types stay separate edges so query-time
 *   type weights can tell them apart); the same pair and type stored in both directions is merged into the
 *   stronger of the two.
 */
export class GraphSnapshot {
  readonly ids: ReadonlyArray<string>
  readonly indexOf: ReadonlyMap<string, number>
  readonly offsets: Int32Array
  readonly targets: Int32Array
  readonly weights: Float32Array
  readonly types: Uint8Array
  readonly droppedLinks: number
  readonly buildMillis: number
  /** Bytes held: the typed arrays exactly, the id strings and their map estimated. */
  readonly byteSize: number

  private constructor(fields: {
    readonly ids: ReadonlyArray<string>
    readonly indexOf: ReadonlyMap<string, number>
    readonly offsets: Int32Array
    readonly targets: Int32Array
    readonly weights: Float32Array
    readonly types: Uint8Array
    readonly droppedLinks: number
    readonly buildMillis: number
  }) {
    this.ids = fields.ids
    this.indexOf = fields.indexOf
    this.offsets = fields.offsets
    this.targets = fields.targets
    this.weights = fields.weights
    this.types = fields.types
    this.droppedLinks = fields.droppedLinks
    this.buildMillis = fields.buildMillis
    let idBytes = 0
    // A string of n one-byte characters takes about 16 + n bytes; array slot and Map entry about 8 + 40.
    for (const id of fields.ids) idBytes += 64 + id.length
    this.byteSize = fields.offsets.byteLength + fields.targets.byteLength + fields.weights.byteLength +
      fields.types.byteLength + idBytes
  }

  get nodeCount(): number {
    return this.ids.length
  }

  #strongestWeight: number | undefined

  /** The greatest stored weight of any edge (0 without edges); read once, then kept. */
  get strongestWeight(): number {
    if (this.#strongestWeight === undefined) {
      let strongest = 0
      // Each list is strongest first: its head is its greatest weight.
      for (let u = 0; u < this.ids.length; u++) {
        if (this.offsets[u + 1]! > this.offsets[u]! && this.weights[this.offsets[u]!]! > strongest) {
          strongest = this.weights[this.offsets[u]!]!
        }
      }
      this.#strongestWeight = strongest
    }
    return this.#strongestWeight
  }

  /** Directed edges: every kept link counts once from each end. */
  get edgeCount(): number {
    return this.targets.length
  }

  degree(index: number): number {
    return this.offsets[index + 1]! - this.offsets[index]!
  }

  /**
   * The node retained just after (`step` 1) or before (-1) `index`, when a temporal link joins them — in a
   * conversation, the next or previous turn — or -1. Nodes are numbered in retain order.
   */
  adjacentInOrder(index: number, step: 1 | -1): number {
    const target = index + step
    if (target < 0 || target >= this.ids.length) return -1
    for (let edge = this.offsets[index]!; edge < this.offsets[index + 1]!; edge++) {
      if (this.targets[edge] === target && this.types[edge] === temporalCode) return target
    }
    return -1
  }

  /**
   * A snapshot from adjacency lists that already follow the build rules (ordered, deduplicated, every target a
   * node): what `LiveGraph.compacted` produces by merging lists that are each in order, without sorting again.
   */
  static fromAdjacency(
    ids: ReadonlyArray<string>,
    adjacency: {
      readonly offsets: Int32Array
      readonly targets: Int32Array
      readonly weights: Float32Array
      readonly types: Uint8Array
    },
    buildMillis: number,
    known?: { readonly indexOf: ReadonlyMap<string, number>; readonly droppedLinks: number }
  ): GraphSnapshot {
    return new GraphSnapshot({
      ids,
      indexOf: known?.indexOf ?? new Map(ids.map((id, index) => [id, index])),
      ...adjacency,
      droppedLinks: known?.droppedLinks ?? 0,
      buildMillis
    })
  }

  static build(source: GraphSource, options: BuildOptions = {}): GraphSnapshot {
    if ("indexedLinks" in source) {
      const builder = GraphSnapshot.builder(source.nodeIds, options)
      for (const link of source.indexedLinks) builder.add(link.from, link.to, link.linkType, link.weight)
      return builder.finish()
    }
    const builder = new GraphSnapshotBuilder(source.nodeIds, options, false)
    const indexOf = builder.indexOf
    for (const link of source.links) {
      const a = indexOf.get(link.fromId)
      const b = indexOf.get(link.toId)
      if (a === undefined || b === undefined) builder.skip()
      else builder.add(a, b, link.linkType, link.weight)
    }
    return builder.finish()
  }

  /**
   * A snapshot fed one link at a time by position in `nodeIds` (distinct), with the rules and result of `build`:
   * for a loader that reads a bank's links in pages, so they never exist as one array of row objects. Links are
   * held as typed arrays until `finish`.
   */
  static builder(nodeIds: ReadonlyArray<string>, options: BuildOptions = {}): GraphSnapshotBuilder {
    return new GraphSnapshotBuilder(nodeIds, options, true)
  }
}

/**
 * `array` cut to its first `length` items: a view while at most an eighth of it goes unused, a copy (letting the
 * rest go) past that. Copying a 100k-memory graph's three edge arrays to their length was one step of ~0.3 s, for
 * the few repeated or removed edges a build or a compaction leaves.
 */
export const trimmed = <T extends Int32Array | Float32Array | Uint8Array>(array: T, length: number): T =>
  (length >= array.length - array.length / 8 ? array.subarray(0, length) : array.slice(0, length)) as T

/** Kept links are stored in chunks of this many, so a large bank's are never copied to grow. */
const chunkBits = 16
const chunkSize = 1 << chunkBits

/** See `GraphSnapshot.builder`. Pass 1 of the build runs in `add`, passes 2 and 3 in `finish`. */
export class GraphSnapshotBuilder {
  readonly ids: Array<string> = []
  readonly indexOf = new Map<string, number>()
  private readonly started = performance.now()
  private readonly factors: Float64Array
  /** Degree of each node so far (one extra slot: it becomes the CSR cursor). */
  private readonly degree: Int32Array
  private readonly from: Array<Int32Array> = []
  private readonly to: Array<Int32Array> = []
  private readonly linkWeight: Array<Float32Array> = []
  private readonly linkType: Array<Uint8Array> = []
  private seen = 0
  private kept = 0
  private finished = false

  /** `indexed`: links come by position and `nodeIds` must be distinct; otherwise a repeated id counts once. */
  constructor(nodeIds: ReadonlyArray<string>, options: BuildOptions, indexed: boolean) {
    const { ids, indexOf } = this
    for (const id of nodeIds) {
      if (indexOf.has(id)) {
        if (indexed) throw new RangeError(`GraphSnapshot.build: node id ${id} is listed twice`)
        continue
      }
      indexOf.set(id, ids.length)
      ids.push(id)
    }
    this.factors = typeTable(options.typeFactors, 1)
    this.degree = new Int32Array(ids.length + 1)
  }

  /** A link whose endpoints are not nodes: dropped, but counted in `droppedLinks`. */
  skip(): void {
    this.seen++
  }

  /** One link between the nodes at positions `from` and `to`. */
  add(from: number, to: number, linkType: string, weight: number): void {
    this.seen++
    const n = this.ids.length
    if (!(from >= 0 && from < n && to >= 0 && to < n && Number.isInteger(from) && Number.isInteger(to))) return
    if (from === to) return
    const code = linkTypeCode(linkType)
    const scaled = weight * this.factors[code]!
    if (!(scaled > 0 && scaled < Infinity)) return
    const chunk = this.kept >>> chunkBits
    if (chunk === this.from.length) {
      this.from.push(new Int32Array(chunkSize))
      this.to.push(new Int32Array(chunkSize))
      this.linkWeight.push(new Float32Array(chunkSize))
      this.linkType.push(new Uint8Array(chunkSize))
    }
    const slot = this.kept & (chunkSize - 1)
    this.from[chunk]![slot] = from
    this.to[chunk]![slot] = to
    this.linkWeight[chunk]![slot] = scaled
    this.linkType[chunk]![slot] = code
    this.degree[from]!++
    this.degree[to]!++
    this.kept++
  }

  finish(): GraphSnapshot {
    return runWhole(this.finishing())
  }

  /** `finish` in slices (`Sliced.ts`): at 2.7M links its passes held the thread for about 0.4 s in one piece. */
  *finishing(): Sliced<GraphSnapshot> {
    if (this.finished) throw new Error("GraphSnapshotBuilder: already finished")
    this.finished = true
    const { ids, indexOf, kept } = this
    const n = ids.length

    // Pass 2: scatter both directions into CSR order.
    const offsets = new Int32Array(n + 1)
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + this.degree[i]!
    const cursor = this.degree
    cursor.set(offsets.subarray(0, n))
    const edges = 2 * kept
    let targets = new Int32Array(edges)
    let weights = new Float32Array(edges)
    let types = new Uint8Array(edges)
    for (let chunk = 0; chunk < this.from.length; chunk++) {
      const from = this.from[chunk]!
      const to = this.to[chunk]!
      const linkWeight = this.linkWeight[chunk]!
      const linkType = this.linkType[chunk]!
      const count = Math.min(chunkSize, kept - chunk * chunkSize)
      // One chunk of links (65,536) per step.
      yield
      for (let i = 0; i < count; i++) {
        const a = from[i]!
        const b = to[i]!
        let slot = cursor[a]!++
        targets[slot] = b
        weights[slot] = linkWeight[i]!
        types[slot] = linkType[i]!
        slot = cursor[b]!++
        targets[slot] = a
        weights[slot] = linkWeight[i]!
        types[slot] = linkType[i]!
      }
    }
    // The links are in the arrays now: let the chunks go before pass 3 allocates.
    this.from.length = 0
    this.to.length = 0
    this.linkWeight.length = 0
    this.linkType.length = 0

    // Pass 3: order each adjacency list, drop repeated (target, type) pairs and compact in place.
    const seenBy = new Int32Array(n).fill(-1)
    const seenTypes = new Uint8Array(n)
    let write = 0
    let start = 0
    const pause = every(50_000)
    for (let u = 0; u < n; u++) {
      const end = offsets[u + 1]!
      if (pause(end - start + 1)) yield
      sortSegment(targets, weights, types, start, end)
      offsets[u] = write
      for (let e = start; e < end; e++) {
        const v = targets[e]!
        const bit = 1 << types[e]!
        if (seenBy[v] !== u) {
          seenBy[v] = u
          seenTypes[v] = bit
        } else if ((seenTypes[v]! & bit) !== 0) {
          continue // a weaker copy of an edge already kept: the list is ordered strongest first
        } else {
          seenTypes[v] = seenTypes[v]! | bit
        }
        targets[write] = v
        weights[write] = weights[e]!
        types[write] = types[e]!
        write++
      }
      start = end
    }
    offsets[n] = write
    // Repeated edges leave room unused (see `trimmed`).
    if (write < edges) {
      yield
      targets = trimmed(targets, write)
      yield
      weights = trimmed(weights, write)
      types = trimmed(types, write)
    }

    return GraphSnapshot.fromAdjacency(ids, { offsets, targets, weights, types }, performance.now() - this.started, {
      indexOf,
      droppedLinks: this.seen - kept
    })
  }
}

/** Sorts one adjacency list by weight descending, then target and type ascending. */
const sortSegment = (targets: Int32Array, weights: Float32Array, types: Uint8Array, start: number, end: number) => {
  const length = end - start
  if (length < 2) return
  if (length <= insertionSortLimit) {
    for (let i = start + 1; i < end; i++) {
      const t = targets[i]!
      const w = weights[i]!
      const c = types[i]!
      let j = i - 1
      while (j >= start) {
        const wj = weights[j]!
        if (wj > w || (wj === w && (targets[j]! < t || (targets[j] === t && types[j]! <= c)))) break
        targets[j + 1] = targets[j]!
        weights[j + 1] = wj
        types[j + 1] = types[j]!
        j--
      }
      targets[j + 1] = t
      weights[j + 1] = w
      types[j + 1] = c
    }
    return
  }
  const order = new Int32Array(length)
  for (let k = 0; k < length; k++) order[k] = start + k
  order.sort((a, b) => weights[b]! - weights[a]! || targets[a]! - targets[b]! || types[a]! - types[b]!)
  const t = new Int32Array(length)
  const w = new Float32Array(length)
  const c = new Uint8Array(length)
  for (let k = 0; k < length; k++) {
    const from = order[k]!
    t[k] = targets[from]!
    w[k] = weights[from]!
    c[k] = types[from]!
  }
  targets.set(t, start)
  weights.set(w, start)
  types.set(c, start)
}

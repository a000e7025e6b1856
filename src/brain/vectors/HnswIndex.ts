/**
 * An approximate nearest-neighbour index over a brain's vectors: HNSW from `hnswlib-node` (chosen by measurement
 * against usearch, hnswlib-wasm and others: the fastest queries and builds here, the only one with a filter
 * predicate, deletion built in; see docs/benchmarks.md). It only proposes candidates — callers score them
 * exactly from `VectorStore`, so scores and ties are the exact scan's.
 *
 * The index names points by its own labels, each the point of one memory id, so compacting the records (which
 * renumbers their slots) moves no point, and a records object taken before a compaction still reads it right. A
 * removed or rewritten memory's point is marked deleted (a rewrite adds a new point); once deleted points are a
 * large share the owner builds a fresh index.
 *
 * A complete index is kept beside the bank's `.brain` file (`writeTo`, `readFrom`): building one costs about 45 s of
 * a core at 100k memories, which every start paid before. Both run on libuv's thread pool, not the event loop.
 */
import hnswlib from "hnswlib-node"
import { setImmediate } from "node:timers/promises"

/** Graph degree, build and query effort: R@50 ≈ 0.98 at 100k × 384 dimensions with ef 128 (measured). */
const m = 16
const efConstruction = 128
const efSearch = 128

/** An index read back from a file, with its labels' memories (`readFrom`). */
interface ReadIndex {
  readonly index: hnswlib.HierarchicalNSW
  readonly idOfLabel: Array<string | undefined>
  readonly labelOfId: Map<string, number>
  readonly deletedCount: number
}

export class HnswIndex {
  readonly dimensions: number
  private readonly index: hnswlib.HierarchicalNSW
  private capacity: number
  /** The memory of each label; undefined once its point is deleted. */
  private readonly idOfLabel: Array<string | undefined> = []
  private readonly labelOfId: Map<string, number> = new Map()
  private deletedCount = 0

  constructor(dimensions: number, capacity = 1024, read?: ReadIndex) {
    this.dimensions = dimensions
    if (read === undefined) {
      this.capacity = Math.max(16, capacity)
      this.index = new hnswlib.HierarchicalNSW("cosine", dimensions)
      this.index.initIndex({ maxElements: this.capacity, m, efConstruction, randomSeed: 42 })
    } else {
      this.index = read.index
      this.capacity = read.index.getMaxElements()
      this.idOfLabel = read.idOfLabel
      this.labelOfId = read.labelOfId
      this.deletedCount = read.deletedCount
    }
    this.index.setEf(efSearch)
  }

  /**
   * The index kept at `path` by `writeTo`, its labels naming `idOfLabel`'s memories (undefined: a deleted point).
   * Refused when the file holds another number of points or another dimension. The labels are taken in 10,000 per
   * turn of the event loop: 100k in one piece held it 30–70 ms.
   */
  static async readFrom(
    path: string,
    dimensions: number,
    idOfLabel: ReadonlyArray<string | undefined>
  ): Promise<HnswIndex> {
    const index = new hnswlib.HierarchicalNSW("cosine", dimensions)
    await index.readIndex(path)
    if (index.getCurrentCount() !== idOfLabel.length || index.getNumDimensions() !== dimensions) {
      throw new RangeError(`the vector index in ${path} does not hold the points its brain file names`)
    }
    const labelled: Array<string | undefined> = new Array(idOfLabel.length)
    const labelOfId = new Map<string, number>()
    let deletedCount = 0
    for (let label = 0; label < idOfLabel.length; label++) {
      if (label > 0 && label % 10_000 === 0) await setImmediate()
      const id = idOfLabel[label]
      // A memory named by two labels keeps the first: the other is a deleted point, as a rewrite leaves.
      if (id !== undefined && !labelOfId.has(id)) {
        labelled[label] = id
        labelOfId.set(id, label)
        continue
      }
      labelled[label] = undefined
      deletedCount++
      // A point the table calls deleted is deleted in the index too (it throws when the file says so already).
      try {
        index.markDelete(label)
      } catch {
        // already deleted
      }
    }
    return new HnswIndex(dimensions, 0, { index, idOfLabel: labelled, labelOfId, deletedCount })
  }

  /**
   * Builds the index of `vectors` (`dimensions` floats each, labelled by position) into `path` with this class's
   * degree, effort and seed, for `readFrom` to take back: the index worker's job. No label map is kept (a million
   * ids would outgrow a worker's small heap). Stops before the next point once `stopped()`; false then.
   */
  static async buildFile(
    path: string,
    dimensions: number,
    vectors: Float32Array,
    capacity: number,
    stopped: () => boolean
  ): Promise<boolean> {
    const count = vectors.length / dimensions
    const index = new hnswlib.HierarchicalNSW("cosine", dimensions)
    index.initIndex({ maxElements: Math.max(16, capacity, count), m, efConstruction, randomSeed: 42 })
    try {
      for (let label = 0; label < count; label++) {
        if (stopped()) return false
        index.addPoint(Array.from(vectors.subarray(label * dimensions, (label + 1) * dimensions)), label)
      }
      await index.writeIndex(path)
      return true
    } finally {
      freeNative(index)
    }
  }

  /** The memory of each label, in label order; undefined for a deleted point (what `readFrom` takes back). */
  labels(): ReadonlyArray<string | undefined> {
    return this.idOfLabel.slice()
  }

  /**
   * Writes the index to `path` on the thread pool. Nothing may add or remove a point until it settles: the owner
   * holds the bank's brain lock, under which every change is made. Deleted points keep their vectors in the file;
   * `HnswFile.sealIndexFile` erases them.
   */
  async writeTo(path: string): Promise<void> {
    // Held here, so the native object cannot be collected while the worker writes it.
    const index = this.index
    await index.writeIndex(path)
  }

  /** Points that answer searches. */
  get size(): number {
    return this.idOfLabel.length - this.deletedCount
  }

  /** Share of the index's points that are deleted (a fresh index is cheaper past a quarter or so). */
  get deletedShare(): number {
    return this.idOfLabel.length === 0 ? 0 : this.deletedCount / this.idOfLabel.length
  }

  has(id: string): boolean {
    return this.labelOfId.has(id)
  }

  /** Adds the memory's vector (replacing its earlier point, if any). */
  add(id: string, vector: Float32Array): void {
    this.remove(id)
    if (this.idOfLabel.length >= this.capacity) {
      this.capacity *= 2
      this.index.resizeIndex(this.capacity)
    }
    const label = this.idOfLabel.length
    this.index.addPoint(Array.from(vector), label)
    this.idOfLabel.push(id)
    this.labelOfId.set(id, label)
  }

  remove(id: string): void {
    const label = this.labelOfId.get(id)
    if (label === undefined) return
    this.index.markDelete(label)
    this.idOfLabel[label] = undefined
    this.labelOfId.delete(id)
    this.deletedCount++
  }

  /**
   * Up to `k` memories near `query` among those `accept` lets through (without it, every point that answers), nearest
   * first (approximately). The filter is a call into JavaScript for each point the search visits: at 100k points it
   * made a query five times dearer, so a caller whose scope takes every memory passes none.
   */
  search(query: Float32Array, k: number, accept?: (id: string) => boolean): Array<string> {
    const wanted = Math.min(k, this.size)
    if (wanted <= 0) return []
    this.index.setEf(Math.max(efSearch, 2 * wanted))
    const found = accept === undefined
      ? this.index.searchKnn(Array.from(query), wanted)
      : this.index.searchKnn(Array.from(query), wanted, (label) => {
        const id = this.idOfLabel[label]
        return id !== undefined && accept(id)
      })
    return found.neighbors.flatMap((label) => this.idOfLabel[label] ?? [])
  }

  /** Frees the native index now (it answers nothing afterwards), instead of at some later garbage collection. */
  release(): void {
    freeNative(this.index)
    this.idOfLabel.length = 0
    this.labelOfId.clear()
    this.deletedCount = 0
  }

  /** Approximate bytes held: the vectors as float32, the graph's links and the label map per point. */
  get byteSize(): number {
    return this.capacity * (this.dimensions * 4 + m * 2 * 4 + 16) + this.idOfLabel.length * 80
  }
}

/**
 * Frees a native index's memory now. Re-initialising is the only way this binding frees one before a garbage
 * collection, which a worker's small heap may not run for minutes.
 */
const freeNative = (index: hnswlib.HierarchicalNSW): void => {
  index.initIndex({ maxElements: 1, m, efConstruction, randomSeed: 42 })
}

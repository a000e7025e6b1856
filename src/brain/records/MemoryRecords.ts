/**
 * Everything recall reads about a bank's memories, held in memory: per memory its text, type, times, tags,
 * document and chunk, metadata, confidence, what superseded it, the entities it names and its embedding; and beside
 * them the names of those entities, which observations name each entity, and the texts of the chunks memories came
 * from. With it a recall answers from the brain alone — candidates, hydration, filters and includes — and touches no
 * database (the SQL path in `src/memory/recall/` stays as the fallback and as the reference the parity tests use).
 *
 * Each memory has a slot. New memories are appended; a memory read again after it changed is overwritten in its
 * slot; a removed memory leaves a tombstone that every scan skips. `compacted` drops tombstones and chunks no memory
 * names any longer. Like the rest of the brain it is derived from PostgreSQL and fed by `BankBrains`.
 */
import { compareIds } from "../../memory/recall/Candidates.ts"
import type { UnitRow } from "../../memory/UnitRow.ts"
import { keepBest } from "../KeepBest.ts"
import { every, runWhole, type Sliced } from "../Sliced.ts"
import { HnswIndex } from "../vectors/HnswIndex.ts"
import type { ScoredSlot } from "../vectors/VectorStore.ts"
import { VectorStore } from "../vectors/VectorStore.ts"

/** One memory as the brain holds it. Times are epoch milliseconds. */
export interface MemoryRecord {
  readonly id: string
  readonly seq: number
  readonly text: string
  readonly factType: string
  readonly context: string | null
  readonly occurredStart: number | null
  readonly occurredEnd: number | null
  readonly mentionedAt: number | null
  readonly createdAt: number | null
  readonly documentId: string | null
  readonly chunkId: string | null
  readonly metadata: Readonly<Record<string, string>> | null
  readonly tags: ReadonlyArray<string>
  readonly sourceFactIds: ReadonlyArray<string> | null
  readonly confidence: number | null
  readonly supersededBy: string | null
  /** When the memory is forgotten; null: never. */
  readonly expiresAt: number | null
}

/** A memory as read from SQL: its record, the entities it names and its embedding (when of the current model). */
export interface MemoryInput extends MemoryRecord {
  readonly entityIds: ReadonlyArray<string>
  readonly embedding: Float32Array | null
}

export interface ChunkText {
  readonly chunkIndex: number
  readonly text: string
}

/** A brain's vectors and their memories, in the same order, for an index built on another thread. */
export interface IndexSnapshot {
  readonly ids: ReadonlyArray<string>
  /** `ids.length × dimensions` floats, in a buffer of its own (it may be moved to another thread). */
  readonly vectors: Float32Array
  /** Filled by the records as memories are removed or change vector after the snapshot. */
  readonly changes: ReadonlySet<string>
}

/** Which memories a request may see: its fact types, when it has one its tag scope, and the instant it reads at. */
export interface RecordScope {
  readonly types: ReadonlyArray<string>
  readonly tags?: ((tags: ReadonlyArray<string>) => boolean) | undefined
  /** Epoch ms: memories expired by then are out of scope (`forgetting/Expiry.ts`). Absent: expiry is not tested. */
  readonly now?: number | undefined
}

/** The type code of a tombstone: no scope allows it. */
const removedCode = 31

/**
 * Vectors × dimensions past which nearest neighbours come from the HNSW index rather than an exact scan (2,500
 * vectors of 100 dimensions, 650 of 384): a scan of this many floats takes a quarter of a millisecond here, a query of
 * the index 0.1–0.2 ms at 100k. A request whose scope holds fewer vectors is scanned exactly too: a filter that
 * rejects most of what HNSW visits makes it walk much of the graph.
 */
const exactScanFloats = 250_000
/** A scope holding less than this share of the bank's vectors is scanned (see `indexPays`). */
const minimumIndexShare = 0.15
/**
 * New HNSW points one `upsert` adds at once; the rest of a large write wait in the index's queue, which the brain
 * drains 16 at a time between requests (`indexStep`); searches scan what waits there beside the index. A 100-item retain
 * or a consolidation batch adds hundreds of memories, each point 0.3–0.6 ms of the event loop at 10k–100k.
 */
const inlineIndexAdds = 16

const noEntities: ReadonlyArray<string> = Object.freeze([])

export class MemoryRecords {
  private readonly slotOf = new Map<string, number>()
  private readonly records: Array<MemoryRecord | undefined> = []
  private readonly entitiesOf: Array<ReadonlyArray<string>> = []
  private typeCodes = new Uint8Array(16)
  private readonly typeNames: Array<string> = []
  private tagSetOf = new Int32Array(16)
  private readonly tagSets: Array<ReadonlyArray<string>> = []
  private readonly tagSetNumbers = new Map<string, number>()
  /** `coalesce(occurred_start, mentioned_at)` and `coalesce(occurred_end, occurred_start, mentioned_at)`; NaN when null. */
  private startsAt = new Float64Array(16)
  private endsAt = new Float64Array(16)
  private seqs = new Float64Array(16)
  /** Each slot's expiry (epoch ms), NaN when it never expires; `expiring` counts the live slots that do. */
  private expiresAt = new Float64Array(16)
  private expiring = 0
  private removedCount = 0
  private textBytes = 0
  readonly vectors: VectorStore
  private readonly entityNames = new Map<string, string>()
  /**
   * Each name's entities, and each entity's place in `entityNames`: a recall's entities are looked up by name, and a
   * walk of every entity of the bank for them cost each recall a step and an entry per entity.
   */
  private readonly entitiesNamed = new Map<string, Array<string>>()
  private readonly entityOrder = new Map<string, number>()
  /** For each entity, the slots of the memories that name it (`include.entities`, a state's other facts). */
  private readonly mentionsOf = new Map<string, Set<number>>()
  /**
   * The same for observations only: a bank's main entities are named by most of its memories and by few
   * observations, and `include.entities` wants those few (a walk of every mention took ~2 ms a recall at 10k).
   */
  private readonly observationsOf = new Map<string, Set<number>>()
  private readonly chunks = new Map<string, ChunkText>()
  private chunkBytes = 0
  /**
   * The HNSW index once the bank is big enough for one, and the memories it still has to take in (while it builds).
   * Keyed by memory id, so a compaction hands it on as it is.
   */
  private ann: HnswIndex | undefined
  private annQueue: Array<string> = []
  /** Points the running `upsert` may still add at once (see `inlineIndexAdds`). */
  private inlinePoints = Number.POSITIVE_INFINITY
  /**
   * While an index is built elsewhere from a snapshot (`indexSnapshot`): the memories whose vector changed or that
   * were removed since, whose points in that index are stale (`adoptingBuiltIndex` takes them out and queues them
   * again).
   */
  private staleInBuild: Set<string> | undefined
  /** Vectors held per (tag set, fact type), so a request's scope is counted without a scan. */
  private readonly vectorsByGroup = new Map<number, number>()
  /** The highest `seq` held. */
  maxSeq = 0

  /**
   * `capacity`: the memories it will hold, when known. Growing by doubling copies every vector held into a fresh
   * buffer in one piece (65k → 131k memories: 52 MB written at once, steps of 0.17–0.35 s on this machine); a
   * buffer sized up front is written a slice at a time as memories are placed.
   */
  constructor(dimensions: number, capacity = 16) {
    this.vectors = new VectorStore(dimensions, capacity)
    this.reserve(capacity)
  }

  /** Makes room for `count` memories at once (see the constructor), when a loader knows how many will come. */
  expect(count: number): void {
    this.reserve(count)
    this.vectors.expect(count)
  }

  /** Live memories. */
  get size(): number {
    return this.records.length - this.removedCount
  }

  /** Slots, tombstones included. */
  get slots(): number {
    return this.records.length
  }

  get tombstones(): number {
    return this.removedCount
  }

  /** Every fact type the records have held (a scope of all of them sees every live memory). */
  get factTypes(): ReadonlyArray<string> {
    return this.typeNames
  }

  has(id: string): boolean {
    return this.slotOf.has(id)
  }

  get(id: string): MemoryRecord | undefined {
    const slot = this.slotOf.get(id)
    return slot === undefined ? undefined : this.records[slot]
  }

  /** The memory's embedding (a view: copy it to keep it), when it has one of the current model. */
  vectorOf(id: string): Float32Array | undefined {
    const slot = this.slotOf.get(id)
    return slot === undefined ? undefined : this.vectors.get(slot)
  }

  idAt(slot: number): string {
    return this.records[slot]?.id ?? ""
  }

  /** Adds new memories and overwrites, in their slots, those already held (read again after they changed). */
  upsert(inputs: Iterable<MemoryInput>): void {
    this.inlinePoints = inlineIndexAdds
    try {
      for (const input of inputs) {
        const { entityIds, embedding, ...record } = input
        this.place(record, entityIds, embedding)
      }
    } finally {
      this.inlinePoints = Number.POSITIVE_INFINITY
    }
  }

  /** Puts a memory in its slot (a new one, or the one it holds), the record object kept as it is. */
  private place(record: MemoryRecord, entityIds: ReadonlyArray<string>, embedding: Float32Array | null): void {
    let slot = this.slotOf.get(record.id)
    const indexed = this.ann?.has(record.id) === true
    const vectorUnchanged = (indexed || this.staleInBuild !== undefined) && slot !== undefined && embedding !== null &&
      this.vectors.has(slot) && sameVector(this.vectors.get(slot)!, embedding)
    if (!vectorUnchanged) this.staleInBuild?.add(record.id)
    // A memory read again for another field (its access telemetry, a confidence) keeps its HNSW point: re-adding an
    // unchanged vector cost ~0.4 ms at 10k, and one catch-up after fifty clients' recalls re-added hundreds at once
    // (300–440 ms of the event loop in `bench/isolation.ts` phase 9).
    const keepPoint = indexed && vectorUnchanged
    if (slot === undefined) {
      slot = this.records.length
      this.records.push(undefined)
      this.entitiesOf.push(noEntities)
      this.slotOf.set(record.id, slot)
      this.reserve(slot + 1)
    } else {
      this.forget(slot, keepPoint)
    }
    this.records[slot] = record
    this.textBytes += 2 * record.text.length + 2 * (record.context?.length ?? 0)
    this.typeCodes[slot] = this.typeCode(record.factType)
    this.tagSetOf[slot] = this.tagSetNumber(record.tags)
    const start = record.occurredStart ?? record.mentionedAt
    const end = record.occurredEnd ?? record.occurredStart ?? record.mentionedAt
    this.startsAt[slot] = start ?? Number.NaN
    this.endsAt[slot] = end ?? Number.NaN
    this.seqs[slot] = record.seq
    this.expiresAt[slot] = record.expiresAt ?? Number.NaN
    if (record.expiresAt !== null) this.expiring++
    this.maxSeq = Math.max(this.maxSeq, record.seq)
    this.vectors.set(slot, embedding)
    if (this.vectors.has(slot)) this.countVector(slot, 1)
    if (this.ann !== undefined && this.vectors.has(slot) && !keepPoint) {
      if (this.annQueue.length > 0 || this.inlinePoints <= 0) this.annQueue.push(record.id)
      else {
        this.inlinePoints--
        this.ann.add(record.id, this.vectors.get(slot)!)
      }
    }
    this.setEntities(slot, entityIds)
  }

  /** Retires a memory: its slot stays, as a tombstone, until `compacted`. False when not held. */
  remove(id: string): boolean {
    const slot = this.slotOf.get(id)
    if (slot === undefined) return false
    this.staleInBuild?.add(id)
    this.forget(slot)
    this.slotOf.delete(id)
    this.records[slot] = undefined
    this.typeCodes[slot] = removedCode
    this.removedCount++
    return true
  }

  /** Whether the memory is held and not expired at `now` (epoch ms). */
  liveAt(id: string, now: number): boolean {
    const slot = this.slotOf.get(id)
    return slot !== undefined && !(this.expiresAt[slot]! <= now)
  }

  /** The held memories expired at `now` (epoch ms): what a search must skip until the sweep deletes them. */
  expiredAt(now: number): ReadonlySet<string> | undefined {
    if (this.expiring === 0) return undefined
    const expired = new Set<string>()
    for (let slot = 0; slot < this.records.length; slot++) {
      if (this.expiresAt[slot]! <= now) expired.add(this.records[slot]!.id)
    }
    return expired.size === 0 ? undefined : expired
  }

  /** Adds entities named by memories already held (a build reads the mentions after the memories). */
  addMentions(mentions: Iterable<{ readonly unitId: string; readonly entityId: string }>): void {
    for (const mention of mentions) {
      const slot = this.slotOf.get(mention.unitId)
      if (slot === undefined) continue
      const held = this.entitiesOf[slot]!
      if (held.includes(mention.entityId)) continue
      this.setEntities(slot, [...held, mention.entityId])
    }
  }

  /** Entity names as the tables have them now (a rename reaches every memory that names the entity). */
  nameEntities(names: Iterable<readonly [string, string]>): void {
    for (const [id, name] of names) {
      const before = this.entityNames.get(id)
      if (before === name) continue
      if (before === undefined) {
        this.entityOrder.set(id, this.entityOrder.size)
      } else {
        const named = this.entitiesNamed.get(before)!
        named.splice(named.indexOf(id), 1)
        if (named.length === 0) this.entitiesNamed.delete(before)
      }
      this.entityNames.set(id, name)
      const named = this.entitiesNamed.get(name)
      if (named === undefined) this.entitiesNamed.set(name, [id])
      else named.push(id)
    }
  }

  /** The ids of the entities with these names, in the order the brain first learnt them. */
  private entitiesWithNames(names: ReadonlyArray<string>): Array<string> {
    const ids: Array<string> = []
    for (const name of new Set(names)) ids.push(...(this.entitiesNamed.get(name) ?? []))
    return ids.sort((a, b) => this.entityOrder.get(a)! - this.entityOrder.get(b)!)
  }

  addChunks(chunks: Iterable<readonly [string, ChunkText]>): void {
    for (const [id, chunk] of chunks) {
      const before = this.chunks.get(id)
      if (before !== undefined) this.chunkBytes -= 2 * before.text.length
      this.chunks.set(id, chunk)
      this.chunkBytes += 2 * chunk.text.length
    }
  }

  hasChunk(id: string): boolean {
    return this.chunks.has(id)
  }

  chunk(id: string): ChunkText | undefined {
    return this.chunks.get(id)
  }

  /** The memory as `MemoryUnits` reads it from SQL, entity names in name order. */
  row(id: string): UnitRow | undefined {
    const slot = this.slotOf.get(id)
    if (slot === undefined) return undefined
    const record = this.records[slot]!
    const names = this.entitiesOf[slot]!
      .map((entityId) => ({ entityId, name: this.entityNames.get(entityId) }))
      .filter((entity): entity is { entityId: string; name: string } => entity.name !== undefined)
      .sort((a, b) => compareIds(a.name, b.name) || compareIds(a.entityId, b.entityId))
      .map((entity) => entity.name)
    return {
      id: record.id,
      text: record.text,
      factType: record.factType,
      context: record.context,
      occurredStart: dateOrNull(record.occurredStart),
      occurredEnd: dateOrNull(record.occurredEnd),
      mentionedAt: dateOrNull(record.mentionedAt),
      documentId: record.documentId,
      chunkId: record.chunkId,
      metadata: record.metadata,
      tags: record.tags,
      sourceFactIds: record.sourceFactIds,
      confidence: record.confidence,
      createdAt: dateOrNull(record.createdAt),
      entityNames: names,
      supersededBy: record.supersededBy,
      expiresAt: dateOrNull(record.expiresAt)
    }
  }

  /** Whether the memory is live and within the scope. */
  inScope(id: string, scope: RecordScope): boolean {
    const slot = this.slotOf.get(id)
    return slot !== undefined && this.scopeTest(scope)(slot)
  }

  /** A test of slots against the scope: type codes as a bit mask, each tag set judged once. */
  scopeTest(scope: RecordScope): (slot: number) => boolean {
    const allowed = this.typeMask(scope.types)
    const { typeCodes, tagSetOf, expiresAt } = this
    const scoped = ((): (slot: number) => boolean => {
      if (scope.tags === undefined) return (slot) => (allowed & (1 << typeCodes[slot]!)) !== 0
      const verdicts = new Uint8Array(this.tagSets.length)
      for (let number = 0; number < this.tagSets.length; number++) {
        verdicts[number] = scope.tags(this.tagSets[number]!)
          ? 1
          : 0
      }
      return (slot) => (allowed & (1 << typeCodes[slot]!)) !== 0 && verdicts[tagSetOf[slot]!] === 1
    })()
    // Only a bank holding expiring memories pays for the test; NaN (never expires) fails `<=`.
    const now = scope.now
    if (now === undefined || this.expiring === 0) return scoped
    return (slot) => scoped(slot) && !(expiresAt[slot]! <= now)
  }

  /**
   * The semantic strategy: the `depth` memories in scope most similar to the query. From the HNSW index when the bank
   * has one that lacks at most a scan's worth of queued vectors — the index's candidates and the queued vectors in
   * scope, all scored exactly, so only which memories come back is approximate — else (and when the scope lets the
   * index find fewer than `depth`, or `exact` is asked) an exact scan. Queued vectors are searched beside the index
   * because a bank being written to always has some: each write queues all but 16 of its points (`inlineIndexAdds`).
   */
  nearest(
    query: Float32Array,
    scope: RecordScope,
    depth: number,
    options?: { readonly exact?: boolean }
  ): Array<{ readonly id: string; readonly score: number }> {
    const test = this.scopeTest(scope)
    const idOf = (slot: number) => this.idAt(slot)
    let found: Array<ScoredSlot> | undefined
    if (options?.exact !== true && this.annAnswers && this.indexPays(this.vectorsInScope(scope))) {
      const norm = Math.sqrt(query.reduce((sum, x) => sum + x * x, 0))
      const accepted = (id: string) => {
        const slot = this.slotOf.get(id)
        return slot !== undefined && this.vectors.has(slot) && test(slot)
      }
      // A scope that takes every live memory needs no filter, the index's dearest part (deleted points never answer).
      const candidates = this.ann!.search(query, depth, this.takesEvery(scope) ? undefined : accepted)
      const slots = new Set(candidates.flatMap((id) => {
        const slot = this.slotOf.get(id)
        return slot !== undefined && this.vectors.has(slot) ? [slot] : []
      }))
      for (const id of this.annQueue) {
        const slot = this.slotOf.get(id)
        if (slot !== undefined && this.vectors.has(slot) && test(slot)) slots.add(slot)
      }
      found = [...slots]
        .map((slot) => ({ slot, score: this.vectors.similarity(query, norm, slot) }))
        .filter((hit) => !Number.isNaN(hit.score))
        .sort((a, b) => b.score - a.score || compareIds(idOf(a.slot), idOf(b.slot)))
        .slice(0, depth)
      if (found.length < depth) found = undefined
    }
    return (found ?? this.vectors.exactTop(query, depth, test, idOf))
      .map((hit) => ({ id: this.idAt(hit.slot), score: hit.score }))
  }

  /** Whether the scope takes every live memory: all the fact types held, no tag filter, nothing that expires. */
  private takesEvery(scope: RecordScope): boolean {
    const everyType = this.typeNames.every((type) => scope.types.includes(type))
    return everyType && scope.tags === undefined && (scope.now === undefined || this.expiring === 0)
  }

  /** An HNSW index exists and lacks no more vectors than an exact scan would take (those are scanned beside it). */
  private get annAnswers(): boolean {
    return this.ann !== undefined && this.annQueue.length * this.vectors.dimensions <= exactScanFloats
  }

  /** The query's similarity to each of `ids` that holds a vector, scored as `nearest` scores them. */
  similarities(
    query: Float32Array,
    ids: ReadonlyArray<string>
  ): Array<{ readonly id: string; readonly score: number }> {
    const norm = Math.sqrt(query.reduce((sum, x) => sum + x * x, 0))
    return ids.flatMap((id) => {
      const slot = this.slotOf.get(id)
      if (slot === undefined || !this.vectors.has(slot)) return []
      const score = this.vectors.similarity(query, norm, slot)
      return Number.isNaN(score) ? [] : [{ id, score }]
    })
  }

  /**
   * Whether the HNSW index beats a scan for a scope holding `inScope` vectors. A scan costs what the scope holds; a
   * filtered HNSW search visits about 1 / (the scope's share) as many points as an unfiltered one, since the filter
   * rejects the rest: at 100k memories a scope of 2.5% took 40–50 ms through the index and under 1 ms scanned.
   */
  private indexPays(inScope: number): boolean {
    return inScope * this.vectors.dimensions > exactScanFloats && inScope >= minimumIndexShare * this.vectors.size
  }

  /** Vectors of memories in the scope, from the per-group counts. */
  vectorsInScope(scope: RecordScope): number {
    const allowed = new Set(scope.types.map((type) => this.typeNames.indexOf(type)).filter((code) => code >= 0))
    let count = 0
    const verdicts = new Map<number, boolean>()
    for (const [group, vectors] of this.vectorsByGroup) {
      if (vectors === 0 || !allowed.has(group % 32)) continue
      const tagSet = Math.floor(group / 32)
      let verdict = verdicts.get(tagSet)
      if (verdict === undefined) {
        verdicts.set(tagSet, verdict = scope.tags === undefined || scope.tags(this.tagSets[tagSet]!))
      }
      if (verdict) count += vectors
    }
    return count
  }

  /** Whether the bank is big enough for an HNSW index and has none yet (`startIndex` begins one). */
  get wantsIndex(): boolean {
    const big = this.vectors.size * this.vectors.dimensions > exactScanFloats
    return big && (this.ann === undefined || this.ann.deletedShare > 0.3)
  }

  /** An HNSW index exists (answering searches, or filling). */
  get hasIndex(): boolean {
    return this.ann !== undefined
  }

  /** An HNSW index is answering searches. */
  get annReady(): boolean {
    return this.ann !== undefined && this.annQueue.length === 0
  }

  /** Begins a fresh HNSW index over the held vectors; `indexStep` fills it a bounded number at a time. */
  startIndex(): void {
    this.ann = new HnswIndex(this.vectors.dimensions, Math.ceil(this.vectors.size * 1.25))
    this.annQueue = []
    for (let slot = 0; slot < this.records.length; slot++) {
      if (this.vectors.has(slot)) this.annQueue.push(this.records[slot]!.id)
    }
  }

  /**
   * The held vectors with their memories, copied 2,000 per step into a buffer of their own (to be moved to the thread
   * that builds an index from them: `HnswBuilder`); from here on changes are tracked for `adoptingBuiltIndex`. A
   * compaction meanwhile carries the tracking along, and this generator goes on reading the records it started on,
   * which the compaction left as they were.
   */
  *indexSnapshot(): Sliced<IndexSnapshot> {
    const stale = new Set<string>()
    this.staleInBuild = stale
    const { dimensions } = this.vectors
    const slots: Array<number> = []
    for (let slot = 0; slot < this.records.length; slot++) {
      if (this.records[slot] !== undefined && this.vectors.has(slot)) slots.push(slot)
    }
    const ids = slots.map((slot) => this.idAt(slot))
    // Filled a step at a time: a fresh 40 MB buffer written in one piece stalls on its page faults (stop 60).
    const vectors = new Float32Array(slots.length * dimensions)
    const pause = every(2_000)
    for (let position = 0; position < slots.length; position++) {
      if (pause()) yield
      // A slot written since (its id is in `stale`) may hold its new vector or be cleared: either is replaced later.
      const vector = this.vectors.get(slots[position]!)
      if (vector !== undefined) vectors.set(vector, position * dimensions)
    }
    return { ids, vectors, changes: stale }
  }

  /**
   * Takes an index built from `snapshot` as this brain's (replacing the one it had): points of memories removed or
   * changed since the snapshot are taken out, and held vectors it lacks are queued for `indexStep`. False, and nothing
   * taken, when these records did not follow that snapshot's changes (built again from the tables since).
   */
  *adoptingBuiltIndex(index: HnswIndex, snapshot: IndexSnapshot): Sliced<boolean> {
    if (this.staleInBuild !== snapshot.changes) return false
    this.staleInBuild = undefined
    for (const id of snapshot.changes) index.remove(id)
    yield* this.adoptingIndex(index)
    return true
  }

  /** The build from `snapshot` failed or was given up: changes are no longer tracked for it. */
  abandonIndexBuild(snapshot: IndexSnapshot): void {
    if (this.staleInBuild === snapshot.changes) this.staleInBuild = undefined
  }

  /** Memories waiting to be added to the index by `indexStep`. */
  get indexQueued(): number {
    return this.annQueue.length
  }

  /** Vectors wait to be added to the index (`indexStep` takes them in). */
  get indexPending(): boolean {
    return this.ann !== undefined && this.annQueue.length > 0
  }

  /**
   * Writes the complete HNSW index to `path` (see `HnswIndex.writeTo`: no change may be made until it settles) and
   * gives, for each of its labels, the position of that memory in `inputs()` order (−1 for a deleted point) — the
   * order a `.brain` file stores them in. Undefined when there is no complete index to write.
   */
  async writeIndex(path: string): Promise<Int32Array | undefined> {
    const ann = this.ann
    if (ann === undefined || !this.annReady) return undefined
    const positionOfSlot = new Int32Array(this.records.length).fill(-1)
    let position = 0
    for (let slot = 0; slot < this.records.length; slot++) {
      if (this.records[slot] !== undefined) positionOfSlot[slot] = position++
    }
    const positions = Int32Array.from(ann.labels(), (id) => {
      const slot = id === undefined ? undefined : this.slotOf.get(id)
      return slot === undefined ? -1 : positionOfSlot[slot]!
    })
    await ann.writeTo(path)
    return positions
  }

  /**
   * Takes a kept index (read back with `HnswIndex.readFrom`) as this brain's: points of memories not held (or held
   * without a vector) are deleted, and held vectors it lacks are queued for `indexStep`. In steps of 10,000 (two walks
   * of 100k in one piece held the event loop 20–40 ms); the index answers only once it is in, at the end.
   */
  *adoptingIndex(index: HnswIndex): Sliced<void> {
    if (index.dimensions !== this.vectors.dimensions) return
    const pause = every(10_000)
    for (const id of index.labels()) {
      if (pause()) yield
      if (id === undefined) continue
      const slot = this.slotOf.get(id)
      if (slot === undefined || !this.vectors.has(slot)) index.remove(id)
    }
    const queue: Array<string> = []
    for (let slot = 0; slot < this.records.length; slot++) {
      if (pause()) yield
      const record = this.records[slot]
      if (record !== undefined && this.vectors.has(slot) && !index.has(record.id)) queue.push(record.id)
    }
    this.ann = index
    this.annQueue = queue
  }

  /** `adoptingIndex` at once (tests, and callers off the request path). */
  adoptIndex(index: HnswIndex): void {
    runWhole(this.adoptingIndex(index))
  }

  /** Adds up to `count` queued vectors to the index being built; true once it is complete. */
  indexStep(count: number): boolean {
    if (this.ann === undefined) return true
    for (let n = 0; n < count && this.annQueue.length > 0; n++) {
      const id = this.annQueue.pop()!
      const slot = this.slotOf.get(id)
      if (slot !== undefined && this.vectors.has(slot) && !this.ann.has(id)) this.ann.add(id, this.vectors.get(slot)!)
    }
    return this.annQueue.length === 0
  }

  /**
   * The temporal strategy: memories in scope whose time overlaps the window, nearest its middle first (then the
   * newest), scored `1 / (1 + |time − middle| / (span / 2))` with time in seconds, as the SQL strategy does.
   */
  inWindow(window: { readonly start: number; readonly end: number }, scope: RecordScope, depth: number) {
    const test = this.scopeTest(scope)
    const middle = (window.start + window.end) / 2
    const halfSpan = Math.max(1, (window.end - window.start) / 2000)
    const found: Array<{ slot: number; score: number }> = []
    const { startsAt, endsAt } = this
    for (let slot = 0; slot < this.records.length; slot++) {
      const start = startsAt[slot]!
      const end = endsAt[slot]!
      // NaN (no time at all) fails every comparison, as NULL does in SQL.
      if (
        !(start <= window.end && end >= window.start && Math.min(start, end) <= window.end &&
          Math.max(start, end) >= window.start)
      ) continue
      if (!test(slot)) continue
      found.push({ slot, score: 1 / (1 + Math.abs(start - middle) / 1000 / halfSpan) })
    }
    found.sort((a, b) => b.score - a.score || this.seqs[b.slot]! - this.seqs[a.slot]!)
    return found.slice(0, depth).map((hit) => ({ id: this.idAt(hit.slot), score: hit.score }))
  }

  /**
   * What `include.entities` reads: for the named entities (by name), their ids, and the bank's latest observations
   * that name any of them (by `coalesce(mentioned_at, created_at)`, newest first, at most `limit` in all).
   */
  entityObservations(names: ReadonlyArray<string>, limit: number, now = Number.NEGATIVE_INFINITY) {
    const picked: Array<{ id: string; canonicalName: string }> = []
    // An entity no live memory names is gone from the tables too (deletes prune it): it is not found here either.
    for (const id of this.entitiesWithNames(names)) {
      if ((this.mentionsOf.get(id)?.size ?? 0) > 0) picked.push({ id, canonicalName: this.entityNames.get(id)! })
    }
    // The newest `limit`, ties in the order met: what a stable sort of all of them and its first `limit` give, without
    // an object per observation of a main entity (hundreds, on every recall that names it).
    const observations: Array<{ entityId: string; slot: number; at: number }> = []
    const newer = (a: { at: number }, b: { at: number }) => a.at > b.at
    for (const entity of picked) {
      for (const slot of this.observationsOf.get(entity.id) ?? []) {
        if (this.expiresAt[slot]! <= now) continue
        const record = this.records[slot]!
        const at = record.mentionedAt ?? record.createdAt ?? Number.NEGATIVE_INFINITY
        if (limit > 0 && observations.length === limit && !(at > observations[limit - 1]!.at)) continue
        keepBest(observations, { entityId: entity.id, slot, at }, limit, newer)
      }
    }
    return {
      entities: picked,
      observations: observations.map((observation) => ({
        entityId: observation.entityId,
        text: this.records[observation.slot]!.text,
        mentionedAt: Number.isFinite(observation.at) ? new Date(observation.at) : null
      }))
    }
  }

  /**
   * The facts (world, experience) that name any of the entities (by name), the most recent first — by when they
   * happened, else when they were said — at most `limit`: a state's history, for questions about a state.
   */
  factsNaming(names: ReadonlyArray<string>, limit: number, now = Number.NEGATIVE_INFINITY): Array<UnitRow> {
    const facts = this.typeMask(["world", "experience"])
    const { typeCodes, startsAt, expiresAt } = this
    // `startsAt` is `coalesce(occurred_start, mentioned_at)`; NaN (neither) sorts last.
    const at = (slot: number) => Number.isNaN(startsAt[slot]!) ? Number.NEGATIVE_INFINITY : startsAt[slot]!
    const newer = (a: number, b: number) => {
      const x = at(a)
      const y = at(b)
      return x !== y ? x > y : compareIds(this.idAt(a), this.idAt(b)) < 0
    }
    const lists = this.entitiesWithNames(names).map((id) => this.mentionsOf.get(id) ?? new Set<number>())
    // A memory naming two of the entities is offered once.
    const seen = lists.length > 1 ? new Set<number>() : undefined
    const kept: Array<number> = []
    for (const slots of lists) {
      for (const slot of slots) {
        if ((facts & (1 << typeCodes[slot]!)) === 0 || expiresAt[slot]! <= now) continue
        if (seen !== undefined) {
          if (seen.has(slot)) continue
          seen.add(slot)
        }
        keepBest(kept, slot, limit, newer)
      }
    }
    return kept.map((slot) => this.row(this.idAt(slot))!)
  }

  /** The same live memories and the chunks they name, without tombstones, in the same order. */
  compacted(): MemoryRecords {
    return runWhole(this.compacting())
  }

  /**
   * `compacted` in slices of 500 memories (`Sliced.ts`): 1.2 s in one piece at 100k memories; slices of 2,000 took 24 ms
   * on a quiet machine and up to 150 ms beside a retention sweep (`bench/isolation.ts` phase 12, stop 69).
   */
  *compacting(): Sliced<MemoryRecords> {
    const next = new MemoryRecords(this.vectors.dimensions, this.size)
    next.nameEntities(this.entityNames)
    const pause = every(500)
    for (let slot = 0; slot < this.records.length; slot++) {
      const record = this.records[slot]
      if (record === undefined) continue
      if (pause()) yield
      next.place(record, this.entitiesOf[slot]!, this.vectors.get(slot) ?? null)
      const chunk = record.chunkId === null ? undefined : this.chunks.get(record.chunkId)
      if (chunk !== undefined && !next.chunks.has(record.chunkId!)) next.addChunks([[record.chunkId!, chunk]])
    }
    next.maxSeq = this.maxSeq
    // The index is keyed by memory id: it serves the compacted records as it is.
    next.ann = this.ann
    next.annQueue = [...this.annQueue]
    next.staleInBuild = this.staleInBuild
    return next
  }

  /** Live memories with the entities they name and their vectors, in slot order (for a `.brain` file). */
  *inputs(): Generator<MemoryInput> {
    for (let slot = 0; slot < this.records.length; slot++) {
      const record = this.records[slot]
      if (record !== undefined) {
        yield { ...record, entityIds: this.entitiesOf[slot]!, embedding: this.vectors.get(slot) ?? null }
      }
    }
  }

  /**
   * The names of the entities live memories name: what a `.brain` file keeps. An entity no memory names any longer
   * (deleted, forgotten) is not written out, so its name does not outlive it in the file.
   */
  entityNameList(): ReadonlyArray<readonly [string, string]> {
    return [...this.entityNames].filter(([id]) => (this.mentionsOf.get(id)?.size ?? 0) > 0)
  }

  chunkList(): ReadonlyArray<readonly [string, ChunkText]> {
    return [...this.chunks]
  }

  /** Approximate bytes held, for metrics and the brain's size limit. */
  get byteSize(): number {
    const perSlot = this.typeCodes.byteLength + this.tagSetOf.byteLength + this.startsAt.byteLength +
      this.endsAt.byteLength + this.seqs.byteLength + this.expiresAt.byteLength
    // A record object with its id and fields, a map entry, and an entity list: about 260 bytes before texts.
    return perSlot + this.records.length * 260 + this.textBytes + this.chunkBytes + this.vectors.byteSize +
      this.entityNames.size * 200 + (this.ann?.byteSize ?? 0)
  }

  private setEntities(slot: number, entityIds: ReadonlyArray<string>): void {
    this.entitiesOf[slot] = entityIds.length === 0 ? noEntities : entityIds
    const observation = this.records[slot]?.factType === "observation"
    for (const entityId of entityIds) {
      slotsOf(this.mentionsOf, entityId).add(slot)
      if (observation) slotsOf(this.observationsOf, entityId).add(slot)
    }
  }

  /** Takes a slot's current record out of the running totals and the entity index (before it is overwritten). */
  private forget(slot: number, keepPoint = false): void {
    const record = this.records[slot]
    if (record === undefined) return
    this.textBytes -= 2 * record.text.length + 2 * (record.context?.length ?? 0)
    if (record.expiresAt !== null) this.expiring--
    this.expiresAt[slot] = Number.NaN
    if (this.vectors.has(slot)) this.countVector(slot, -1)
    this.vectors.clear(slot)
    if (!keepPoint) this.ann?.remove(record.id)
    for (const entityId of this.entitiesOf[slot]!) {
      this.mentionsOf.get(entityId)?.delete(slot)
      this.observationsOf.get(entityId)?.delete(slot)
    }
    this.entitiesOf[slot] = noEntities
  }

  private countVector(slot: number, change: number): void {
    const group = this.tagSetOf[slot]! * 32 + this.typeCodes[slot]!
    this.vectorsByGroup.set(group, (this.vectorsByGroup.get(group) ?? 0) + change)
  }

  private reserve(count: number): void {
    if (count <= this.typeCodes.length) return
    const capacity = Math.max(count, this.typeCodes.length * 2)
    this.typeCodes = grown(this.typeCodes, capacity, (n) => new Uint8Array(n))
    this.tagSetOf = grown(this.tagSetOf, capacity, (n) => new Int32Array(n))
    this.startsAt = grown(this.startsAt, capacity, (n) => new Float64Array(n))
    this.endsAt = grown(this.endsAt, capacity, (n) => new Float64Array(n))
    this.seqs = grown(this.seqs, capacity, (n) => new Float64Array(n))
    this.expiresAt = grown(this.expiresAt, capacity, (n) => new Float64Array(n))
  }

  private typeCode(factType: string): number {
    let code = this.typeNames.indexOf(factType)
    if (code < 0) {
      code = this.typeNames.length
      if (code >= removedCode) throw new RangeError("MemoryRecords: too many fact types")
      this.typeNames.push(factType)
    }
    return code
  }

  /** The type codes of the fact types the bank holds among `factTypes`, as bits. */
  private typeMask(factTypes: ReadonlyArray<string>): number {
    let mask = 0
    for (const factType of factTypes) {
      const code = this.typeNames.indexOf(factType)
      if (code >= 0) mask |= 1 << code
    }
    return mask
  }

  private tagSetNumber(tags: ReadonlyArray<string>): number {
    const key = JSON.stringify(tags)
    let number = this.tagSetNumbers.get(key)
    if (number === undefined) {
      number = this.tagSets.length
      this.tagSets.push(tags)
      this.tagSetNumbers.set(key, number)
    }
    return number
  }
}

const slotsOf = (index: Map<string, Set<number>>, entityId: string): Set<number> => {
  let slots = index.get(entityId)
  if (slots === undefined) index.set(entityId, slots = new Set())
  return slots
}

const dateOrNull = (millis: number | null): Date | null => (millis === null ? null : new Date(millis))

const grown = <A extends Uint8Array | Int32Array | Float64Array>(
  array: A,
  length: number,
  make: (length: number) => A
): A => {
  const larger = make(length)
  larger.set(array as never)
  return larger
}

const sameVector = (held: Float32Array, read: Float32Array): boolean => {
  if (held.length !== read.length) return false
  for (let i = 0; i < held.length; i++) if (held[i] !== read[i]) return false
  return true
}

/**
 * Each bank's in-memory brain (`Brain.ts`): its graph (for spreading activation and conversation context), its keyword
 * index and its memory records (everything else recall reads), built from PostgreSQL (`BrainReads.ts`) on first use and then kept current with the bank's writes as deltas — new memories
 * and their links are appended, removed memories become tombstones, rewritten ones are re-indexed — so a read after
 * a write never waits for a rebuild. A writer calls `changed` after its commit; the delta is applied at once in the
 * background, and a reader that arrives first applies it itself (both under the bank's brain lock, so it is
 * applied once). When the delta or the tombstones grow past a share of the base, the brain is compacted in memory.
 * PostgreSQL stays the truth: the brain is derived and is dropped when the bank's actor passivates or it sits unused.
 * Each bank's builds go through a circuit breaker (`BrainBreaker`): while it is open `available` answers none and
 * recall reads from SQL; so does a bank whose brain would pass `maxBytes` (it is released after its build). A brain can be taken out (`snapshot`, for a `.brain` file) and put back (`install`) when the
 * bank's data version still matches the one it was taken at, so an import costs no rebuild. When `.brain` files are
 * attached (`attachFiles`, by the brain runtime), a cold read loads the bank's kept file and catches up from the
 * tables instead of building: the change log is then kept back to the file's mark, so the file stays usable.
 */
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Latch,
  Layer,
  Option,
  Result,
  Schedule,
  Semaphore
} from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { GraphSnapshot, type GraphSnapshotBuilder } from "./graph/GraphSnapshot.ts"
import { LiveGraph } from "./graph/LiveGraph.ts"
import { KeywordIndex } from "./keyword/KeywordIndex.ts"
import type { KeywordIndexParts } from "./keyword/KeywordIndex.ts"
import type { DataVersion } from "./file/BrainFile.ts"
import { sameDataVersion } from "./file/BrainFile.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { Embeddings, modelKey } from "../models/Embeddings.ts"
import { type Brain, brainBytes, compactingBrain, wantsCompaction } from "./Brain.ts"
import { runSliced } from "./Sliced.ts"
import { type BrainDelta, makeBrainReads } from "./BrainReads.ts"
import { MemoryRecords } from "./records/MemoryRecords.ts"
import { makeChangeLogMarks, type SharedChangeLog } from "./ChangeLogMarks.ts"
import { BrainBreaker, BrainFaults, type BrainStats, type BreakerState, emptyStats } from "./BrainBreaker.ts"
import { Foreground } from "../bank/Foreground.ts"
import { type HnswBuilder, makeHnswBuilder } from "./vectors/HnswBuilder.ts"
import { type HeldVectors, lendVectors } from "./HeldVectors.ts"

export type { Brain } from "./Brain.ts"

export interface BankBrainsOptions {
  /**
   * The database is shared with other nodes (a cluster), each of which may hold a brain of the same bank and catch
   * up from the memory change log at its own pace: prune the log only below every live node's mark
   * (src/brain/ChangeLogMarks.ts). Without it, one process serves the database and prunes what its brain applied.
   */
  readonly sharedChangeLog?: SharedChangeLog
  /** A brain unused for this long is released. Default 5 minutes. */
  readonly idleTimeToLive?: Duration.Input
  /**
   * Compact when the delta's edges exceed this share of the base's, or tombstones this share of the positions.
   * Default 0.25.
   */
  readonly compactShare?: number
  /**
   * More added or changed memories than this since the last catch-up (a large import, a bank emptied) are read as
   * a rebuild instead of a delta: cheaper, and their ids would not fit in one statement's parameters. Default 5000.
   */
  readonly bulkChange?: number
  /**
   * One process prunes a bank's change log once it has applied this many of the bank's entries since the last
   * prune, or this long after it (default 512 entries or 10 seconds): entries left a while cost nothing, since a
   * catch-up reads past its mark by index, while a prune after every catch-up was a statement of its own each time.
   */
  readonly pruneEvery?: { readonly entries: number; readonly millis: number }
  /**
   * Rows a build reads per round trip. Default 500 memories (each with its text, fields and vector, decoded and indexed
   * on the event loop in one piece per page: with 2,000, /health waited up to 190 ms during a cold 100k build in
   * bench/isolation.ts) and 10,000 links (about 0.5 MB on the wire): pages this
   * small are garbage before the young generation is next collected, so V8's old space does not grow with the bank;
   * tests set them tiny to read in many pages.
   */
  readonly pageRows?: { readonly memories: number; readonly links: number }
  /** Failed builds in a row that open a bank's breaker, and how long it stays open. Default 3 and 30 seconds. */
  readonly breaker?: { readonly failures: number; readonly coolDown: Duration.Input }
  /**
   * A bank whose brain holds more bytes than this keeps none: its reads answer from SQL. Default 2 GiB
   * (`SERVICE_API_BRAIN_MAX_BYTES` sets it for the service).
   */
  readonly maxBytes?: number
  /**
   * Build big banks' HNSW indexes on a worker thread (`HnswBuilder`). Default true; false fills them on the event
   * loop in slices, as the worker's fallback does.
   */
  readonly indexWorker?: boolean
  /** The embedding model whose vectors the brain holds. Default: the `Embeddings` service's, when there is one. */
  readonly vectors?: { readonly model: string; readonly dimensions: number }
}

/** A brain taken out for a `.brain` file: compacted, with the data version it describes. */
export interface BrainSnapshot {
  readonly graph: GraphSnapshot
  readonly keywords: KeywordIndexParts
  readonly records: MemoryRecords
  readonly dataVersion: DataVersion
  /**
   * With `indexFile` asked and the bank's HNSW index complete: the index was written there, and this gives the
   * position (in the records' order) of each of its labels' memories, −1 for a deleted point.
   */
  readonly vectorIndex?: { readonly file: string; readonly labelPositions: Int32Array }
}

/** The brain side of a bank's status. */
export interface BrainRuntimeState {
  readonly loaded: boolean
  readonly breaker: BreakerState
  readonly failureCount: number
  readonly stats: BrainStats
  readonly bytes: number
  /** The data version the loaded brain describes, when one is loaded. */
  readonly dataVersion: DataVersion | null
  /** Nearest neighbours by exact scan (`exact`), from an HNSW index (`ready`), or by scan while one fills. */
  readonly vectorIndex: "exact" | "building" | "ready"
}

/** A brain read from the bank's kept `.brain` file, with the data version it describes. */
export interface KeptBrain {
  readonly graph: GraphSnapshot
  readonly keywords: KeywordIndex
  readonly records: MemoryRecords
  readonly dataVersion: DataVersion
}

/** Kept `.brain` files, as `BankBrains` uses them (`src/brain/KeptBrainFiles.ts` attaches them). */
export interface BrainFiles {
  /** The bank's kept file as a brain, when there is a valid one written for this service's models. */
  readonly load: (bankId: string) => Effect.Effect<Option.Option<KeptBrain>>
  /**
   * Writes the bank's brain to its file when the bank is big enough to keep one (never fails). Called when an idle
   * brain is released and when its file falls far behind; never right after a build, while the brain is in use:
   * writing a 100k-memory brain's file raised the server's resident memory by about 110 MB for good.
   */
  readonly keep: (bankId: string, memories: number) => Effect.Effect<void>
  /** Writes the bank's brain to its file whatever the bank's size (never fails): someone asked for the brain. */
  readonly keepNow: (bankId: string) => Effect.Effect<void>
}

/** Why an imported brain was not installed as it is (then the next read builds one from SQL as usual). */
export type InstallOutcome = { readonly installed: true } | { readonly installed: false; readonly reason: string }

class BrainBuildFault extends Error {}

interface Entry {
  brain: Brain | undefined
  /** The highest `seq` the brain holds: later memories are the next delta. */
  seqMark: number
  /** The last `memory_unit_changes` entry applied. */
  changeMark: number
  /**
   * The change mark of the bank's kept `.brain` file, when this brain came from it or was written to it: the log is
   * pruned only below it, so the file can still be caught up after a restart or on another node.
   */
  fileMark: number | undefined
  /** Change-log entries applied since the file was written: past `bulkChange`, the file is renewed. */
  changesSinceFile: number
  /** Change-log entries applied since this process last pruned the bank's log, and when it did (`pruneChanges`). */
  changesSincePrune: number
  prunedAt: number
  /** Bumped by every committed write: a catch-up that started before the bump leaves the brain marked stale. */
  version: number
  appliedVersion: number
  /**
   * The version a read must find applied before it may use the brain. `changed` moves it with `version`; a write
   * applied by its own caller (`applyWrite`) does not, unless that application fails: its caller acknowledges it
   * only once it is applied, so until then a read need not see it, and does not wait for it.
   */
  owedVersion: number
  lastUsed: number
  /** A compaction is waiting for a lull or running. */
  compacting: boolean
  /** A bulk change is being read whole: readers use the brain as it was until it is done. */
  rebuilding: boolean
  /** Idle, and being written to its file before it is released. */
  releasing: boolean
  /** Its HNSW index is being filled in the background. */
  indexing: boolean
  /** Opened by a read while the index fills: the next slice runs without waiting for a lull. */
  readonly indexNudge: Latch.Latch
  readonly lock: Semaphore.Semaphore
}

/**
 * What a writer's commit will add to the bank's brain, read by `deltaOfWrite` inside its transaction: the brain and
 * the marks it was read from, and the bank's write count then. Opaque to the writer, which hands it to `applyWrite`.
 */
export interface WriteDelta {
  readonly brain: Brain
  readonly seqMark: number
  readonly changeMark: number
  readonly version: number
  readonly delta: BrainDelta
}

/** What a deletion does to a bank's kept `.brain` file (see `updateKeptFile`). */
export type KeptFileUpdate = "rewrite" | "drop"

export class BankBrains extends Context.Service<BankBrains, {
  /** A write to the bank committed: bring its brain (if loaded) up to date in the background. */
  readonly changed: (bankId: string) => Effect.Effect<void>
  /**
   * A write the caller committed and has not acknowledged yet: its brain (if loaded) applies it before this returns
   * (the catch-up runs in the service's scope and the caller waits for it; for a bulk write, until its rebuild has
   * begun). Reads meanwhile use the brain as it was rather than wait for the catch-up: nobody has been told of the
   * write yet. For the writes on a request's path (a retain), so that fifty clients' recalls do not
   * each wait for the database session behind the retains' statements.
   */
  readonly applyWrite: (bankId: string, written?: WriteDelta) => Effect.Effect<void>
  /**
   * For a writer's transaction, after its last write and before its commit: reads what the commit will add to the
   * bank's brain, in the transaction (so it sees the writer's own rows and holds no second turn at the database), for
   * `applyWrite` to apply after the commit without a read of its own. None, and no statement, when the bank has no
   * brain loaded or it is being rebuilt; none when the write is bulk (then `applyWrite` rebuilds, as without it).
   * `applyWrite` falls back to its own read when the brain moved meanwhile (another write's catch-up, a rebuild).
   */
  readonly deltaOfWrite: (bankId: string) => Effect.Effect<WriteDelta | undefined, SqlError>
  /**
   * For a writer's nearest-neighbour search: the bank's loaded brain's vectors at its position now (`HeldVectors`),
   * when the brain holds vectors of `model` at `dimensions` and is not being rebuilt; reads nothing.
   */
  readonly heldVectors: (bankId: string, model: string, dimensions: number) => HeldVectors | undefined
  /** Releases the bank's brain (its actor passivated, or the bank was deleted). */
  readonly drop: (bankId: string) => Effect.Effect<void>
  /** Releases the bank's brain; the next read builds it from the tables, not from its kept file. */
  readonly rebuild: (bankId: string) => Effect.Effect<void>
  /**
   * A number that moves whenever `changed` or `drop` is called for the bank (in this process): anything derived
   * from the bank's memories and cached under the generation it read first is current while it has not moved.
   */
  readonly generation: (bankId: string) => Effect.Effect<number>
  /** Bytes held by all brains. */
  readonly size: Effect.Effect<number>
  /**
   * The bank's brain, current with every write committed before the call (built first when there is none) — or
   * none while its breaker is open or its build failed (the failure is counted): callers then answer from SQL.
   */
  readonly available: (bankId: string) => Effect.Effect<Option.Option<Brain>>
  /** The bank's brain brought current and compacted, with its data version; none while the breaker is open. */
  readonly snapshot: (
    bankId: string,
    options?: { readonly indexFile?: string }
  ) => Effect.Effect<Option.Option<BrainSnapshot>>
  /** Puts an imported brain in place when the bank's data version is still the one it was taken at. */
  readonly install: (bankId: string, brain: KeptBrain) => Effect.Effect<InstallOutcome>
  /** Where the bank's memories stand now, read from SQL. */
  readonly dataVersion: (bankId: string) => Effect.Effect<DataVersion>
  readonly state: (bankId: string) => Effect.Effect<BrainRuntimeState>
  /** Cold reads load kept `.brain` files from now on, and big brains ask for one. */
  readonly attachFiles: (files: BrainFiles) => Effect.Effect<void>
  /**
   * Writes the bank's brain to its kept file now, whatever its size: an explicit rebuild (`sub-routine` with
   * `force_rebuild`) leaves the file its caller asked for. Nothing when kept files are off.
   */
  readonly keepFileNow: (bankId: string) => Effect.Effect<void>
  /**
   * After memories were deleted and the brain caught up, so the bank's kept `.brain` file, when it has one, no longer
   * holds what was deleted: `rewrite` writes it again (removing it when it cannot be written; true when written),
   * `drop` removes it, to be written again when the brain is next released or the service stops — what a delete of a
   * few memories does, since writing a file costs what the bank holds. Whatever the kept-files setting: a file
   * written while it was on still holds the content.
   */
  readonly updateKeptFile: (bankId: string, how?: KeptFileUpdate) => Effect.Effect<boolean>
  /** How `updateKeptFile` does it (the brain runtime attaches it; until then there is no file to update). */
  readonly attachKeptFileUpdate: (
    update: (bankId: string, how: KeptFileUpdate) => Effect.Effect<boolean>
  ) => Effect.Effect<void>
  /** The bank's kept file now holds the brain as of `dataVersion` (from `snapshot`). */
  readonly fileWritten: (bankId: string, dataVersion: DataVersion) => Effect.Effect<void>
  /** Banks whose brain is loaded now. */
  readonly loadedBanks: Effect.Effect<ReadonlyArray<string>>
  /**
   * Whether the bank's brain is loaded now (whatever its catch-up state): a loaded brain means the bank exists, so a
   * read that will use it need not ask the database.
   */
  readonly isLoaded: (bankId: string) => boolean
}>()("engram/brain/BankBrains") {
  static readonly layerWith = (options: BankBrainsOptions) =>
    Layer.effect(
      BankBrains,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const foreground = yield* Foreground
        const timeToLive = Duration.toMillis(options.idleTimeToLive ?? Duration.minutes(5))
        const share = options.compactShare ?? 0.25
        const bulkChange = options.bulkChange ?? 5_000
        const pruneEvery = options.pruneEvery ?? { entries: 512, millis: 10_000 }
        const pageRows = options.pageRows ?? { memories: 500, links: 10_000 }
        const entries = new Map<string, Entry>()
        const scope = yield* Effect.scope
        const faults = yield* BrainFaults
        const builder = options.indexWorker === false ? undefined : yield* makeHnswBuilder()
        const breakerFailures = options.breaker?.failures ?? 3
        const coolDownMillis = Duration.toMillis(options.breaker?.coolDown ?? Duration.seconds(30))
        // Kept apart from the entries (swept when idle): a breaker and its counters outlive an idle brain.
        const breakers = new Map<string, BrainBreaker>()
        const statsByBank = new Map<string, BrainStats>()
        const breakerOf = (bankId: string) => {
          let breaker = breakers.get(bankId)
          if (breaker === undefined) breakers.set(bankId, breaker = new BrainBreaker(breakerFailures, coolDownMillis))
          return breaker
        }
        const statsOf = (bankId: string) => {
          let stats = statsByBank.get(bankId)
          if (stats === undefined) statsByBank.set(bankId, stats = emptyStats())
          return stats
        }

        const embeddings = yield* Effect.serviceOption(Embeddings)
        const vectors = options.vectors ?? (Option.isSome(embeddings)
          ? { model: modelKey(embeddings.value.identity), dimensions: embeddings.value.identity.dimensions }
          : undefined)
        const reads = makeBrainReads(sql, { vectors, pageRows, bulkChange })
        const dimensions = vectors?.dimensions ?? 0
        const maxBytes = options.maxBytes ?? 2 * 1024 ** 3
        /**
         * Banks whose brain passed `maxBytes` when last built or caught up, and until when their reads answer from
         * SQL without trying again (a build of a brain that is then thrown away is the most expensive read there is).
         */
        const oversized = new Map<string, number>()

        const marks = options.sharedChangeLog === undefined
          ? undefined
          : makeChangeLogMarks(sql, options.sharedChangeLog)
        let files: BrainFiles | undefined
        let keptFileUpdate: ((bankId: string, how: KeptFileUpdate) => Effect.Effect<boolean>) | undefined
        /** Banks whose next cold read builds from the tables (`rebuild`). */
        const fromTables = new Set<string>()

        /**
         * The entries a brain has applied are of no further use (one process serves a database) — except the last
         * one, whose `change_seq` is part of the bank's data version (a `.brain` file is stamped with it), and those
         * after the kept file's mark. With a shared database, only below every live node's mark.
         */
        const pruneChanges = (bankId: string, entry: Entry, upTo: number, applied: number) =>
          Effect.gen(function*() {
            const below = entry.fileMark === undefined ? upTo : Math.min(upTo, entry.fileMark)
            if (marks === undefined) {
              entry.changesSincePrune += applied
              // In batches (`pruneEvery`): a prune after every catch-up was a statement each time, 6 ms apiece as
              // traced with one client retaining and observations on (about a tenth of the statement time).
              const now = yield* Clock.currentTimeMillis
              if (entry.changesSincePrune < pruneEvery.entries && now - entry.prunedAt < pruneEvery.millis) return
              entry.changesSincePrune = 0
              entry.prunedAt = now
            }
            // With a shared log, the mark is this node's word on how far it has applied: recorded every time.
            yield* (marks === undefined ? reads.prune(bankId, below) : marks.record(bankId, below)).pipe(
              Effect.catch((error) => Effect.logWarning("could not prune the memory change log", error)),
              Effect.forkIn(scope)
            )
          })

        /** The whole brain from the tables (see `BrainReads.build`). */
        const build = (bankId: string, entry: Entry) =>
          Effect.gen(function*() {
            if (faults.failBuild(bankId)) return yield* Effect.fail(new BrainBuildFault("injected brain build failure"))
            const keywords = KeywordIndex.build([])
            const records = new MemoryRecords(dimensions)
            const nodeIds: Array<string> = []
            let graph: GraphSnapshotBuilder | undefined
            let seqMark = 0
            const changeMark = yield* reads.build(bankId, {
              expect: (memories) => records.expect(memories),
              memories: (memories) => {
                keywords.append(memories.map((memory) => memory.indexed))
                records.upsert(memories.map((memory) => memory.input))
                for (const memory of memories) {
                  nodeIds.push(memory.input.id)
                  seqMark = Math.max(seqMark, memory.input.seq)
                }
              },
              links: (links) => {
                graph ??= GraphSnapshot.builder(nodeIds)
                for (const link of links) {
                  graph.add(link[0] as number, link[1] as number, link[2] as string, link[3] as number)
                }
              },
              mentions: (mentions) => records.addMentions(mentions),
              entityNames: (names) => records.nameEntities(names),
              chunks: (chunks) => records.addChunks(chunks)
            })
            // The build's last passes sort millions of edges: in slices, a turn of the event loop between them.
            const snapshot = yield* runSliced((graph ?? GraphSnapshot.builder(nodeIds)).finishing(), Effect.yieldNow)
            const brain: Brain = {
              graph: yield* runSliced(LiveGraph.ofSliced(snapshot), Effect.yieldNow),
              keywords,
              records
            }
            entry.brain = brain
            entry.seqMark = seqMark
            entry.changeMark = changeMark
            const stats = statsOf(bankId)
            stats.builds++
            stats.lastBuildMillis = snapshot.buildMillis
            stats.lastBuiltAt = yield* Clock.currentTimeMillis
            yield* Effect.annotateCurrentSpan({
              memories: snapshot.nodeCount,
              edges: snapshot.edgeCount,
              buildMillis: snapshot.buildMillis
            })
            // With a shared log even an empty mark is recorded, so other nodes do not prune past this brain. A build
            // is rare: it prunes at once.
            entry.fileMark = undefined
            if (changeMark > 0 || marks !== undefined) {
              yield* pruneChanges(bankId, entry, changeMark, Number.POSITIVE_INFINITY)
            }
          }).pipe(Effect.withSpan("BankBrains.build", { attributes: { bankId } }))

        /**
         * A cold read: the bank's kept `.brain` file, caught up from the tables like a brain after a write, when there
         * is one; else a build. The first catch-up of a file's brain also checks that the log still reaches back to
         * the file (the horizon) and that the result holds exactly the bank's live memories (a file left by a
         * deleted bank of the same id, say); if not, it is built from the tables after all.
         */
        const coldStart = (bankId: string, entry: Entry) =>
          Effect.gen(function*() {
            const skipFile = fromTables.delete(bankId)
            const kept = files === undefined || skipFile ? Option.none<KeptBrain>() : yield* files.load(bankId)
            if (Option.isNone(kept)) return yield* build(bankId, entry)
            const brain: Brain = {
              graph: yield* runSliced(LiveGraph.ofSliced(kept.value.graph), Effect.yieldNow),
              keywords: kept.value.keywords,
              records: kept.value.records
            }
            entry.seqMark = kept.value.dataVersion.seqMark
            entry.changeMark = kept.value.dataVersion.changeMark
            entry.fileMark = kept.value.dataVersion.changeMark
            entry.changesSinceFile = 0
            statsOf(bankId).fileLoads++
            if (brain.records.hasIndex) statsOf(bankId).indexLoads++
            // Not in `entry.brain` until caught up: readers wait for it rather than read the file's older state.
            yield* catchUp(bankId, entry, brain, { fromFile: true })
            if (entry.brain === undefined) entry.brain = brain
          }).pipe(Effect.withSpan("BankBrains.coldStart", { attributes: { bankId } }))

        /**
         * What was written since the marks (`BrainReads.delta`); a brain just loaded from its file also checks the
         * log's horizon and counts the bank's memories.
         */
        const readDelta = (
          bankId: string,
          from: { readonly seqMark: number; readonly changeMark: number },
          brain: Brain,
          fromFile = false
        ) =>
          reads.delta(bankId, {
            seqMark: from.seqMark,
            changeMark: from.changeMark,
            checkHorizon: marks !== undefined || fromFile,
            countLive: fromFile,
            hasChunk: (id) => brain.records.hasChunk(id)
          })

        /** Applies what was written since the brain's marks (`BrainReads.delta`), or rebuilds when that is bulk. */
        const catchUp = (
          bankId: string,
          entry: Entry,
          brain: Brain,
          options?: {
            readonly fromFile?: boolean
            readonly onRebuild?: (() => void) | undefined
            /** Read already, from the brain's current marks (`deltaOfWrite`). */
            readonly delta?: BrainDelta | undefined
          }
        ) =>
          Effect.gen(function*() {
            const fromFile = options?.fromFile === true
            const delta = options?.delta ?? (yield* readDelta(bankId, entry, brain, fromFile))
            if (delta === undefined) {
              // Readers keep the brain they have meanwhile (see `available`): a rebuild is never on a request's path.
              entry.rebuilding = true
              options?.onRebuild?.()
              return yield* build(bankId, entry).pipe(Effect.ensuring(Effect.sync(() => (entry.rebuilding = false))))
            }
            const still = new Set(delta.rewritten.map((memory) => memory.input.id))
            for (const id of delta.changedIds) {
              brain.keywords.remove(id)
              if (!still.has(id)) {
                brain.graph.remove(id)
                brain.records.remove(id)
              }
            }
            brain.keywords.append(delta.rewritten.map((memory) => memory.indexed))
            brain.keywords.append(delta.added.map((memory) => memory.indexed))
            brain.records.nameEntities(delta.entityNames)
            brain.records.addChunks(delta.chunks)
            brain.records.upsert(delta.rewritten.map((memory) => memory.input))
            brain.records.upsert(delta.added.map((memory) => memory.input))
            brain.graph.appendNodes(delta.added.map((memory) => memory.input.id))
            // A rewritten memory's links may have been derived anew: its old ones go, its current ones come in.
            brain.graph.detach(delta.rewritten.map((memory) => memory.input.id))
            brain.graph.addLinks(delta.links)
            brain.graph.addLinks(delta.rewrittenLinks)
            if (delta.live !== undefined && brain.keywords.size !== delta.live) {
              // Not exposed yet (a cold start): dropped for a build from the tables.
              yield* Effect.logInfo(`the kept brain file of bank ${bankId} does not match its memories; building it`)
              return yield* build(bankId, entry)
            }
            // A file loaded with nothing to catch up applied no write.
            if (!fromFile || delta.changeCount + delta.added.length > 0) statsOf(bankId).incrementalUpdates++
            for (const memory of delta.added) entry.seqMark = Math.max(entry.seqMark, memory.input.seq)
            if (delta.lastChangeSeq !== undefined) {
              entry.changeMark = delta.lastChangeSeq
              yield* pruneChanges(bankId, entry, delta.lastChangeSeq, delta.changeCount)
            }
            if (entry.fileMark !== undefined && files !== undefined) {
              entry.changesSinceFile += delta.changeCount
              // The log kept for the file has grown as long as a catch-up would read: renew the file in a lull (the
              // file's snapshot takes this lock, so not here).
              if (entry.changesSinceFile > bulkChange) {
                entry.changesSinceFile = 0
                yield* foreground.yieldToRequests.pipe(
                  Effect.andThen(files.keep(bankId, brain.keywords.size)),
                  Effect.forkIn(scope)
                )
              }
            }
            if (brain.graph.needsCompaction) yield* compactGraph(bankId, entry)
            yield* Effect.annotateCurrentSpan({
              added: delta.added.length,
              changed: delta.changedIds.length,
              links: delta.links.length
            })
            if (wantsCompaction(brain, share) && !entry.compacting) {
              entry.compacting = true
              // Started in a lull and run in slices (3.5 s of one core at 100k memories, in one piece before): under the
              // bank's brain lock, so no catch-up changes the brain meanwhile; reads use the brain as it was.
              yield* foreground.yieldToRequests.pipe(
                Effect.andThen(Effect.logInfo(`compacting the brain of bank ${bankId}`)),
                Effect.andThen(entry.lock.withPermit(compact(bankId, entry))),
                Effect.ensuring(Effect.sync(() => (entry.compacting = false))),
                Effect.withSpan("BankBrains.compact", { attributes: { bankId } }),
                Effect.forkIn(scope)
              )
            }
          }).pipe(Effect.withSpan("BankBrains.catchUp", { attributes: { bankId } }))

        /**
         * A graph that took a stronger copy of a link it held is built again, in slices (about 1.8M links at 100k were
         * rebuilt in one piece): under the brain lock, like every catch-up, so nothing changes it meanwhile; readers
         * keep the graph they have until the new one is in.
         */
        const compactGraph = (bankId: string, entry: Entry) =>
          Effect.gen(function*() {
            const brain = entry.brain
            if (brain === undefined) return
            const graph = yield* runSliced(brain.graph.compacting(), Effect.yieldNow)
            // Released meanwhile (the brain is dropped, not to be brought back here).
            if (entry.brain !== brain) return
            entry.brain = { ...brain, graph }
            statsOf(bankId).compactions++
          })

        /** Under the brain lock (no catch-up interleaves): the compacted brain holds everything applied so far. */
        const compact = (bankId: string, entry: Entry) =>
          Effect.gen(function*() {
            const brain = entry.brain
            if (brain === undefined || !wantsCompaction(brain, share)) return
            const compacted = yield* runSliced(compactingBrain(brain), Effect.yieldNow)
            // Released meanwhile (the bank passivated or was deleted): nothing to put back.
            if (entry.brain !== brain) return
            entry.brain = compacted
            statsOf(bankId).compactions++
          })

        const entryOf = (bankId: string, now: number) => {
          let entry = entries.get(bankId)
          if (entry === undefined) {
            entry = {
              brain: undefined,
              seqMark: 0,
              changeMark: 0,
              fileMark: undefined,
              changesSincePrune: 0,
              prunedAt: 0,
              changesSinceFile: 0,
              version: 0,
              appliedVersion: 0,
              owedVersion: 0,
              lastUsed: now,
              compacting: false,
              rebuilding: false,
              releasing: false,
              indexing: false,
              indexNudge: Latch.makeUnsafe(false),
              lock: Semaphore.makeUnsafe(1)
            }
            entries.set(bankId, entry)
          }
          return entry
        }

        /**
         * A big bank's vectors get an HNSW index, built on the index worker (`HnswBuilder`) from a snapshot of its
         * vectors; searches scan exactly until it is in (or use the index it replaces). What changed meanwhile, and
         * what a kept index read with the file lacks, is added here, 16 vectors per slice (3–7 ms at 100k). A slice
         * runs after a lull, or at once after a read of the bank: each read meanwhile scans every vector (9–30 ms
         * at 100k), so one slice per read pays for itself, and under sustained load there is no lull. Without the
         * worker (`indexWorker: false`, or when it fails) the whole index is filled that way. Reads the brain each
         * slice anew: a compaction replaces the records object and carries the index along.
         */
        const vectorsPerSlice = 16
        const fillIndex = (bankId: string, entry: Entry) =>
          Effect.gen(function*() {
            while (true) {
              yield* Effect.raceFirst(foreground.yieldToRequests, Latch.await(entry.indexNudge))
              Latch.closeUnsafe(entry.indexNudge)
              // After a read, not inside it: the slice waits for the event loop's next turn.
              yield* Effect.yieldNow
              const current = entry.brain?.records
              if (current === undefined || entries.get(bankId) !== entry) return
              const queued = current.indexQueued
              const complete = current.indexStep(vectorsPerSlice)
              statsOf(bankId).indexPointsAddedInline += queued - current.indexQueued
              if (complete) return
            }
          })

        /**
         * Builds the index on the worker and puts it in under the lock. False when the worker failed (the caller then
         * fills it here); true otherwise, also when the brain was released or built again from the tables meanwhile
         * (the next read starts a build of its own).
         */
        const buildIndexAside = (bankId: string, entry: Entry, builder: HnswBuilder, records: MemoryRecords) =>
          Effect.gen(function*() {
            const snapshot = yield* runSliced(records.indexSnapshot(), Effect.yieldNow)
            const abandon = Effect.sync(() => entry.brain?.records.abandonIndexBuild(snapshot))
            const built = yield* Effect.result(builder.build(snapshot, records.vectors.dimensions)).pipe(
              Effect.onInterrupt(() => abandon)
            )
            return yield* entry.lock.withPermit(Effect.gen(function*() {
              const current = entry.brain?.records
              if (current === undefined || entries.get(bankId) !== entry) return true
              if (Result.isFailure(built)) {
                current.abandonIndexBuild(snapshot)
                yield* Effect.logWarning(
                  `the vector index of bank ${bankId} could not be built on its worker; building it here`,
                  built.failure.message
                )
                return false
              }
              if (yield* runSliced(current.adoptingBuiltIndex(built.success, snapshot), Effect.yieldNow)) {
                statsOf(bankId).indexWorkerBuilds++
              } else {
                built.success.release()
              }
              return true
            }))
          })

        const indexInBackground = (bankId: string, entry: Entry) => {
          const records = entry.brain?.records
          if (entry.indexing || records === undefined || !(records.wantsIndex || records.indexPending)) {
            return Effect.void
          }
          entry.indexing = true
          const wanted = records.wantsIndex
          if (wanted) statsOf(bankId).indexBuilds++
          return Effect.gen(function*() {
            // A kept index read with the file only takes in what it lacks.
            if (wanted) {
              const builtAside = builder !== undefined && (yield* buildIndexAside(bankId, entry, builder, records))
              const current = entry.brain?.records
              if (!builtAside && current !== undefined && entries.get(bankId) === entry) current.startIndex()
            }
            yield* fillIndex(bankId, entry)
          }).pipe(
            Effect.ensuring(Effect.sync(() => (entry.indexing = false))),
            Effect.withSpan("BankBrains.index", { attributes: { bankId } }),
            Effect.forkIn(scope),
            Effect.asVoid
          )
        }

        /**
         * Builds or catches up under the lock, unless someone else did while we waited; the breaker counts the
         * outcome. Only the catch-up after a write (`changed`, `applyWrite`) runs it without asking the breaker: it
         * needs a loaded brain, which a closed breaker built. `onRebuild` is called when the catch-up turns out to be
         * a rebuild, once reads keep the brain as it was until that is done.
         */
        const refreshOrFail = (bankId: string, entry: Entry, onRebuild?: () => void, written?: WriteDelta) =>
          entry.lock.withPermit(Effect.gen(function*() {
            const version = entry.version
            if (entry.brain === undefined) yield* coldStart(bankId, entry)
            else if (entry.appliedVersion !== version) {
              const fresh = written !== undefined && readFrom(entry, written) ? written : undefined
              yield* catchUp(bankId, entry, entry.brain, { onRebuild, delta: fresh?.delta })
              // The writer's delta holds every write counted before it was read, and the writer's own (one count
              // since): with no other count since, the brain is current; else what the others wrote is read now.
              if (fresh !== undefined && version !== fresh.version + 1) {
                yield* catchUp(bankId, entry, entry.brain, { onRebuild })
              }
            }
            entry.appliedVersion = version
            yield* indexInBackground(bankId, entry)
            return entry.brain!
          })).pipe(
            Effect.tap(() => Effect.sync(() => breakerOf(bankId).succeeded())),
            Effect.tapCause((cause) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.sync(() => {
                  if (Cause.hasInterruptsOnly(cause)) return breakerOf(bankId).abandoned()
                  breakerOf(bankId).failed(now)
                  statsOf(bankId).buildFailures++
                }))
            )
          )

        const available = (bankId: string) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.suspend((): Effect.Effect<Option.Option<Brain>> => {
              const stats = statsOf(bankId)
              stats.reads++
              const entry = entryOf(bankId, now)
              entry.lastUsed = now
              const brain = entry.brain
              if (entry.indexing) Latch.openUnsafe(entry.indexNudge)
              if (brain !== undefined && (entry.appliedVersion >= entry.owedVersion || entry.rebuilding)) {
                return Effect.succeed(Option.some(brain))
              }
              if ((oversized.get(bankId) ?? 0) > now || !breakerOf(bankId).admit(now)) {
                stats.sqlFallbacks++
                return Effect.succeedNone
              }
              if (brain === undefined) stats.coldReads++
              return refreshOrFail(bankId, entry).pipe(
                Effect.map((held) => {
                  if (brainBytes(held) <= maxBytes) return Option.some(held)
                  // Too big to keep: released (its readers answer from SQL) until the idle time-to-live has passed.
                  oversized.set(bankId, now + timeToLive)
                  if (entries.get(bankId) === entry) entries.delete(bankId)
                  stats.sqlFallbacks++
                  return Option.none<Brain>()
                }),
                Effect.catchCause((cause) =>
                  Cause.hasInterruptsOnly(cause)
                    ? Effect.failCause(cause as Cause.Cause<never>)
                    : Effect.logWarning(`the brain of bank ${bankId} could not be built; answering from SQL`, cause)
                      .pipe(
                        Effect.andThen(Effect.sync(() => void stats.sqlFallbacks++)),
                        Effect.as(Option.none<Brain>())
                      )
                )
              )
            }))

        const dataVersion = (bankId: string) => Effect.orDie(reads.dataVersion(bankId))

        /**
         * Under the lock: current, then compacted in place (a later read gains from it too), then flattened. The HNSW
         * index is written under the lock too (on the thread pool: ~0.1 s at 100k), since every change to it is made
         * under the lock; a catch-up waits for it.
         */
        const snapshot = (bankId: string, options?: { readonly indexFile?: string }) =>
          Effect.gen(function*() {
            const brain = yield* available(bankId)
            if (Option.isNone(brain)) return Option.none<BrainSnapshot>()
            const entry = entryOf(bankId, yield* Clock.currentTimeMillis)
            return yield* entry.lock.withPermit(Effect.gen(function*() {
              const held = entry.brain
              // Dropped meanwhile (passivated, bank deleted): its marks are gone with it.
              if (held === undefined) return Option.none<BrainSnapshot>()
              let graph = held.graph
              let records = held.records
              if (!graph.isBase || records.tombstones > 0) {
                graph = graph.isBase ? graph : yield* runSliced(graph.compacting(), Effect.yieldNow)
                records = records.tombstones > 0 ? yield* runSliced(records.compacting(), Effect.yieldNow) : records
                if (entry.brain === held) entry.brain = { ...held, graph, records }
                statsOf(bankId).compactions++
              }
              const keywords = yield* runSliced(held.keywords.toPartsSliced(), Effect.yieldNow)
              const indexFile = options?.indexFile
              const labelPositions = indexFile === undefined ?
                undefined :
                yield* Effect.tryPromise(() => records.writeIndex(indexFile)).pipe(
                  Effect.catch((error) =>
                    Effect.as(Effect.logWarning(`could not keep the vector index of bank ${bankId}`, error), undefined)
                  )
                )
              return Option.some<BrainSnapshot>({
                graph: graph.base,
                keywords,
                records,
                ...(indexFile !== undefined && labelPositions !== undefined
                  ? { vectorIndex: { file: indexFile, labelPositions } }
                  : {}),
                // The marks of what the brain holds: a write that lands later moves the bank past this stamp.
                dataVersion: { memories: keywords.ids.length, seqMark: entry.seqMark, changeMark: entry.changeMark }
              })
            }))
          }).pipe(Effect.withSpan("BankBrains.snapshot", { attributes: { bankId } }))

        /**
         * Under the lock, so no catch-up interleaves: the bank's data version is compared with the brain's, and the
         * brain replaces whatever was loaded. A write committing after the comparison bumps the version as usual,
         * and the next read catches up from the installed marks.
         */
        const install = (bankId: string, imported: KeptBrain) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const entry = entryOf(bankId, now)
            // The imported graph's own copy is made in slices before the lock: the comparison and the swap stay together.
            const graph = yield* runSliced(LiveGraph.ofSliced(imported.graph), Effect.yieldNow)
            return yield* entry.lock.withPermit(Effect.gen(function*() {
              const version = entry.version
              const bank = yield* dataVersion(bankId)
              if (!sameDataVersion(bank, imported.dataVersion)) {
                return {
                  installed: false,
                  reason:
                    `the bank's data version moved since the file was written (file ${imported.dataVersion.memories}.${imported.dataVersion.seqMark}.${imported.dataVersion.changeMark}, bank ${bank.memories}.${bank.seqMark}.${bank.changeMark})`
                } satisfies InstallOutcome
              }
              entry.brain = {
                graph,
                keywords: imported.keywords,
                records: imported.records
              }
              entry.seqMark = imported.dataVersion.seqMark
              entry.changeMark = imported.dataVersion.changeMark
              // The import is stored as the bank's file.
              entry.fileMark = imported.dataVersion.changeMark
              entry.changesSinceFile = 0
              entry.appliedVersion = version
              entry.lastUsed = now
              breakerOf(bankId).succeeded()
              statsOf(bankId).imports++
              bump(bankId)
              return { installed: true } satisfies InstallOutcome
            }))
          }).pipe(Effect.withSpan("BankBrains.install", { attributes: { bankId } }))

        const state = (bankId: string) =>
          Effect.map(Clock.currentTimeMillis, (now): BrainRuntimeState => {
            const entry = entries.get(bankId)
            const breaker = breakerOf(bankId)
            const brain = entry?.brain
            return {
              loaded: brain !== undefined,
              breaker: breaker.state(now),
              failureCount: breaker.failureCount,
              stats: { ...statsOf(bankId) },
              bytes: brain === undefined ? 0 : brainBytes(brain),
              vectorIndex: brain === undefined || (!brain.records.hasIndex && entry?.indexing !== true)
                ? "exact"
                : brain.records.annReady
                ? "ready"
                : "building",
              dataVersion: brain === undefined || entry === undefined
                ? null
                : { memories: brain.keywords.size, seqMark: entry.seqMark, changeMark: entry.changeMark }
            }
          })

        // Kept apart from the entries (which are swept when idle) so that a generation never goes back.
        const generations = new Map<string, number>()
        const bump = (bankId: string) => generations.set(bankId, (generations.get(bankId) ?? 0) + 1)

        const couldNotApply = (cause: Cause.Cause<unknown>) =>
          Effect.logWarning("could not apply a write to the bank's brain", cause)

        /** The writer's delta was read from the brain as it still is: nothing was applied or rebuilt since. */
        const readFrom = (entry: Entry, written: WriteDelta) =>
          entry.brain === written.brain && !entry.rebuilding && entry.seqMark === written.seqMark &&
          entry.changeMark === written.changeMark

        const deltaOfWrite = (bankId: string) =>
          Effect.suspend(() => {
            const entry = entries.get(bankId)
            const brain = entry?.brain
            if (entry === undefined || brain === undefined || entry.rebuilding) return Effect.succeed(undefined)
            const taken = { brain, seqMark: entry.seqMark, changeMark: entry.changeMark, version: entry.version }
            return readDelta(bankId, taken, brain).pipe(
              Effect.map((delta): WriteDelta | undefined => delta === undefined ? undefined : { ...taken, delta }),
              Effect.withSpan("BankBrains.deltaOfWrite", { attributes: { bankId } })
            )
          })

        const heldVectors = (bankId: string, model: string, held: number): HeldVectors | undefined => {
          const entry = entries.get(bankId)
          if (entry?.brain === undefined || entry.rebuilding) return undefined
          if (vectors === undefined || vectors.model !== model || vectors.dimensions !== held) return undefined
          const positionOf = (of: Entry) => ({ seqMark: of.seqMark, changeMark: of.changeMark })
          return lendVectors(positionOf(entry), () => {
            const now = entries.get(bankId)
            return now?.brain === undefined || now.rebuilding
              ? undefined
              : { records: now.brain.records, position: positionOf(now) }
          })
        }

        /** A committed write moves the bank's generation and its brain's version: the entry, when there is one. */
        const countWrite = (bankId: string) => {
          bump(bankId)
          const entry = entries.get(bankId)
          if (entry !== undefined) entry.version++
          return entry
        }

        const changed = (bankId: string) =>
          Effect.suspend(() => {
            const entry = countWrite(bankId)
            if (entry === undefined) return Effect.void
            entry.owedVersion = entry.version
            if (entry.brain === undefined) return Effect.void
            return refreshOrFail(bankId, entry).pipe(
              Effect.catchCause(couldNotApply),
              Effect.forkIn(scope),
              Effect.asVoid
            )
          })

        const applyWrite = (bankId: string, written?: WriteDelta) =>
          Effect.suspend(() => {
            const entry = countWrite(bankId)
            if (entry === undefined) return Effect.void
            const version = entry.version
            // No brain to apply it to, or one being built that may have read the tables before this commit: the next
            // read catches up, as after `changed`.
            if (entry.brain === undefined) return Effect.sync(() => void (entry.owedVersion = version))
            // Settled once reads see the write, or once a rebuild has begun (a bulk write): reads then use the brain
            // as it was until the rebuild is done, as after `changed`, and the writer does not wait for a whole build.
            const settled = Deferred.makeUnsafe<void>()
            const settle = () => void Deferred.doneUnsafe(settled, Exit.void)
            return refreshOrFail(bankId, entry, settle, written).pipe(
              Effect.onExit((exit) =>
                Effect.sync(() => {
                  if (Exit.isFailure(exit)) entry.owedVersion = Math.max(entry.owedVersion, version)
                  settle()
                })
              ),
              Effect.catchCause(couldNotApply),
              // In the service's scope, as `changed`'s: a writer that goes away leaves the catch-up to finish.
              Effect.forkIn(scope),
              Effect.andThen(Deferred.await(settled))
            )
          })

        /** Idle brains are released; with files attached, a big one is written to its file first. */
        const sweep = Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          for (const [bankId, entry] of entries) {
            if (now - entry.lastUsed < timeToLive || entry.releasing) continue
            if (files === undefined || entry.brain === undefined) {
              entries.delete(bankId)
              continue
            }
            entry.releasing = true
            yield* files.keep(bankId, entry.brain.keywords.size).pipe(
              Effect.ensuring(Effect.sync(() => {
                if (entries.get(bankId) === entry) entries.delete(bankId)
              })),
              Effect.forkIn(scope)
            )
          }
        })
        yield* sweep.pipe(
          Effect.repeat(Schedule.spaced(Duration.millis(Math.min(60_000, Math.max(1_000, timeToLive / 2))))),
          Effect.forkScoped
        )
        if (marks !== undefined) {
          // Keeps this node's marks live while it holds the brains; a node that stops renewing holds nobody back.
          yield* Effect.suspend(() =>
            marks.renew([...entries].filter(([, entry]) => entry.brain !== undefined).map(([bankId]) => bankId))
          ).pipe(
            Effect.catch((error) => Effect.logWarning("could not renew this node's change log marks", error)),
            Effect.repeat(Schedule.spaced(marks.renewEvery)),
            Effect.withTracerEnabled(false),
            Effect.forkScoped
          )
        }

        return BankBrains.of({
          changed,
          applyWrite,
          deltaOfWrite,
          heldVectors,
          drop: (bankId) =>
            Effect.sync(() => {
              bump(bankId)
              entries.delete(bankId)
              oversized.delete(bankId)
            }),
          rebuild: (bankId) =>
            Effect.sync(() => {
              bump(bankId)
              entries.delete(bankId)
              oversized.delete(bankId)
              fromTables.add(bankId)
            }),
          isLoaded: (bankId) => entries.get(bankId)?.brain !== undefined,
          generation: (bankId) => Effect.sync(() => generations.get(bankId) ?? 0),
          available,
          snapshot,
          install,
          dataVersion,
          state,
          attachFiles: (attached) => Effect.sync(() => void (files = attached)),
          keepFileNow: (bankId) => Effect.suspend(() => files === undefined ? Effect.void : files.keepNow(bankId)),
          updateKeptFile: (bankId, how = "rewrite") =>
            Effect.suspend(() => keptFileUpdate === undefined ? Effect.succeed(false) : keptFileUpdate(bankId, how)),
          attachKeptFileUpdate: (attached) => Effect.sync(() => void (keptFileUpdate = attached)),
          fileWritten: (bankId, version) =>
            Effect.sync(() => {
              const entry = entries.get(bankId)
              if (entry === undefined || entry.brain === undefined) return
              entry.fileMark = version.changeMark
              entry.changesSinceFile = 0
            }),
          loadedBanks: Effect.sync(() =>
            [...entries].filter(([, entry]) => entry.brain !== undefined).map(([bankId]) => bankId)
          ),
          size: Effect.sync(() => {
            let bytes = 0
            for (const entry of entries.values()) {
              if (entry.brain !== undefined) bytes += brainBytes(entry.brain)
            }
            return bytes
          })
        })
      })
    )

  /** With the breaker settings of SERVICE_API_BRAIN_CIRCUIT_BREAKER_*. */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const config = yield* EngramConfig
    const embeddings = yield* Embeddings
    return BankBrains.layerWith({
      vectors: { model: modelKey(embeddings.identity), dimensions: embeddings.identity.dimensions },
      maxBytes: config.brain.maxBytes,
      indexWorker: config.brain.indexWorker,
      breaker: { failures: config.brain.breakerFailures, coolDown: config.brain.breakerCoolDown },
      ...(config.cluster.mode === "off" ? {} : { sharedChangeLog: { nodeId: crypto.randomUUID() } })
    })
  }))
}

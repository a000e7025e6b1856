/**
 * The SQL that feeds a bank's brain: a whole build (memories, links, mentions, entity names and chunks, read through
 * cursors a page at a time in one repeatable-read transaction), the delta since a brain's marks (from the memory
 * change log and `seq`), the bank's data version, and the pruning of the change log. `BankBrains` decides when each
 * runs; nothing here holds state.
 */
import { Effect } from "effect"
import { identity } from "effect/Function"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { Fragment, Statement } from "effect/sql/Statement"
import type { DataVersion } from "./file/BrainFile.ts"
import type { IndexedMemory } from "./keyword/KeywordIndex.ts"
import type { ChunkText, MemoryInput } from "./records/MemoryRecords.ts"
import { bankChangeMark, bankPositionColumns } from "./HeldVectors.ts"

/** A memory as the brain's reads select it: its record, its lexemes and its embedding (of the current model). */
interface MemoryRow {
  readonly id: string
  readonly seq: number
  readonly text: string
  readonly factType: string
  readonly context: string | null
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly mentionedAt: Date | null
  readonly createdAt: Date | null
  readonly documentId: string | null
  readonly chunkId: string | null
  readonly metadata: Record<string, string> | null
  readonly tags: ReadonlyArray<string> | null
  readonly sourceFactIds: ReadonlyArray<string> | null
  readonly confidence: number | null
  readonly supersededBy: string | null
  readonly expiresAt: Date | null
  readonly lexemes: ReadonlyArray<string>
  readonly embedding: Float32Array | null
}

export interface Mention {
  readonly unitId: string
  readonly entityId: string
}

export interface LinkRow {
  readonly fromId: string
  readonly toId: string
  readonly linkType: string
  readonly weight: number
}

/** A memory read for the brain: what the keyword index takes, and what the records take. */
export interface ReadMemory {
  readonly indexed: IndexedMemory
  readonly input: MemoryInput
}

/** Where a build hands what it reads, page by page. */
export interface BuildSinks {
  /** How many memories the pages will bring, before the first page (room for them is made once). */
  readonly expect: (memories: number) => void
  readonly memories: (memories: ReadonlyArray<ReadMemory>) => void
  /** Links as `[from position, to position, type, weight]`, positions numbered in `seq` order from 0. */
  readonly links: (links: ReadonlyArray<ReadonlyArray<unknown>>) => void
  readonly mentions: (mentions: ReadonlyArray<Mention>) => void
  readonly entityNames: (names: ReadonlyArray<readonly [string, string]>) => void
  readonly chunks: (chunks: ReadonlyArray<readonly [string, ChunkText]>) => void
}

/** What was written since a brain's marks. */
export interface BrainDelta {
  /** Change-log entries since the mark, and the last one's number (none without entries). */
  readonly changeCount: number
  readonly lastChangeSeq: number | undefined
  /** The memories those entries name, each once. */
  readonly changedIds: ReadonlyArray<string>
  readonly added: ReadonlyArray<ReadMemory>
  /** Changed memories that are still there, read again. */
  readonly rewritten: ReadonlyArray<ReadMemory>
  readonly links: ReadonlyArray<LinkRow>
  /**
   * Every link of the rewritten memories as it is now: a rewrite may derive a memory's links anew (a curated text
   * loses its semantic and temporal links and is linked again), so the brain drops theirs and takes these.
   */
  readonly rewrittenLinks: ReadonlyArray<LinkRow>
  readonly entityNames: ReadonlyArray<readonly [string, string]>
  /** Chunks named by the added and rewritten memories that the brain did not hold. */
  readonly chunks: ReadonlyArray<readonly [string, ChunkText]>
  /** With `countLive`: the bank's live memories in the same snapshot. */
  readonly live: number | undefined
}

export interface BrainReadsOptions {
  /** The embedding model whose vectors the brain holds; none without an embedder (the brain then holds no vectors). */
  readonly vectors: { readonly model: string; readonly dimensions: number } | undefined
  /** Rows a build reads per round trip. */
  readonly pageRows: { readonly memories: number; readonly links: number }
  /** Above this many added or changed memories a delta is not read: the caller rebuilds. */
  readonly bulkChange: number
}

const millis = (date: Date | null): number | null => (date === null ? null : date.getTime())

const readMemory = (row: MemoryRow, entityIds: ReadonlyArray<string> = []): ReadMemory => ({
  indexed: { id: row.id, seq: row.seq, factType: row.factType, tags: row.tags ?? [], lexemes: row.lexemes ?? [] },
  input: {
    id: row.id,
    seq: row.seq,
    text: row.text,
    factType: row.factType,
    context: row.context,
    occurredStart: millis(row.occurredStart),
    occurredEnd: millis(row.occurredEnd),
    mentionedAt: millis(row.mentionedAt),
    createdAt: millis(row.createdAt),
    documentId: row.documentId,
    chunkId: row.chunkId,
    metadata: row.metadata,
    tags: row.tags ?? [],
    sourceFactIds: row.sourceFactIds,
    confidence: row.confidence,
    supersededBy: row.supersededBy,
    expiresAt: millis(row.expiresAt),
    entityIds,
    embedding: row.embedding
  }
})

/** A row of the delta's one statement: its summary (once) or one memory with its mentions, links and chunk. */
interface DeltaRow {
  readonly changeCount: number | null
  readonly lastChangeSeq: number | null
  readonly changedIds: ReadonlyArray<string>
  readonly addedCount: number
  readonly prunedBelow: number | null
  readonly live: number | null
  readonly isAdded: boolean
  readonly chunk: readonly [number, string] | null
  readonly mentions: ReadonlyArray<readonly [string, string]> | null
  readonly links: ReadonlyArray<readonly [string, string, string, number]> | null
}

/** A memory's row rather than the summary's (whose memory columns are null). */
const isMemory = (row: DeltaRow & Partial<MemoryRow>): row is DeltaRow & MemoryRow => row.id != null

/** The memories' links, each once: a link between two of them comes with both. */
const linksOf = (memories: ReadonlyArray<DeltaRow>): Array<LinkRow> => {
  const links = new Map<string, LinkRow>()
  for (const memory of memories) {
    for (const [fromId, toId, linkType, weight] of memory.links ?? []) {
      links.set(`${fromId}\u0000${toId}\u0000${linkType}`, { fromId, toId, linkType, weight })
    }
  }
  return [...links.values()]
}

export const makeBrainReads = (sql: SqlClient.SqlClient, options: BrainReadsOptions) => {
  /** A transaction whose reads all see one moment (a build's pages); its `BEGIN` says so, one round trip less. */
  const repeatableRead = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(effect).pipe(
      Effect.provideService(SqlClient.BeginTransaction, "BEGIN ISOLATION LEVEL REPEATABLE READ")
    )

  const embedding = options.vectors === undefined
    ? sql`NULL::vector AS embedding`
    : sql`CASE WHEN embedding_model = ${options.vectors.model} AND vector_dims(embedding) = ${options.vectors.dimensions}
        THEN embedding END AS embedding`

  const memoryColumns = sql`id, seq::float8 AS seq, text, fact_type, context, occurred_start, occurred_end,
    mentioned_at, created_at, document_id, chunk_id, metadata, tags, source_fact_ids, confidence, superseded_by,
    expires_at, tsvector_to_array(search_text) AS lexemes, ${embedding}`

  const memoryRows = (where: Fragment) =>
    sql<MemoryRow>`SELECT ${memoryColumns} FROM memory_units WHERE ${where} ORDER BY seq`

  const lastChange = (bankId: string) =>
    sql<{ mark: number }>`SELECT ${bankChangeMark(sql, bankId)} AS mark`.pipe(Effect.map((rows) => rows[0]?.mark ?? 0))

  const dataVersion = (bankId: string) =>
    sql<{ memories: number; seqMark: number; changeMark: number }>`
      SELECT (SELECT count(*)::float8 FROM memory_units WHERE bank_id = ${bankId}) AS memories,
        ${bankPositionColumns(sql, bankId)}`
      .pipe(Effect.map((rows): DataVersion => rows[0] ?? { memories: 0, seqMark: 0, changeMark: 0 }))

  /**
   * Deletes the bank's log entries below `below` and records how far it was pruned (the horizon), so a brain loaded
   * from an older file can tell whether it can still catch up. One process serving the database.
   */
  const prune = (bankId: string, below: number) =>
    sql`
      WITH pruned AS (
        DELETE FROM memory_unit_changes WHERE bank_id = ${bankId} AND change_seq < ${below} RETURNING 1)
      INSERT INTO memory_change_horizons (bank_id, pruned_below)
      SELECT ${bankId}, ${below} WHERE EXISTS (SELECT 1 FROM pruned)
      ON CONFLICT (bank_id) DO UPDATE
        SET pruned_below = greatest(memory_change_horizons.pruned_below, excluded.pruned_below)`

  /**
   * Runs `query` through the cursor `cursor` and hands its rows to `onPage` a page at a time, so a large result
   * never exists whole — not as row objects here, not as one reply in the driver's buffer or in PGlite's memory.
   * Only inside a transaction (the cursor lives until it ends). One cursor name per query: the driver may keep the
   * `FETCH` prepared, with the columns of the cursor it first read.
   */
  const inPages = <A extends object, R>(
    cursor: "brain_memories" | "brain_links" | "brain_mentions" | "brain_chunks",
    query: Statement<A>,
    pageSize: number,
    read: (fetch: Statement<A>) => Effect.Effect<ReadonlyArray<R>, SqlError>,
    onPage: (rows: ReadonlyArray<R>) => void
  ) =>
    Effect.gen(function*() {
      yield* sql`DECLARE ${sql(cursor)} NO SCROLL CURSOR FOR ${query}`
      while (true) {
        const rows = yield* read(sql<A>`FETCH FORWARD ${sql.literal(String(pageSize))} FROM ${sql(cursor)}`)
        onPage(rows)
        if (rows.length < pageSize) break
      }
      yield* sql`CLOSE ${sql(cursor)}`
    })

  /**
   * The whole brain from the tables, in one repeatable-read transaction so memories, links and the change mark
   * describe the same moment. Positions are numbered in SQL, in retain order. Everything is read in pages straight
   * into the sinks: at 100k memories a bank has millions of links, and as row objects they took a gigabyte of heap
   * for a moment (which V8 then keeps). Answers the change mark it read.
   */
  const build = (bankId: string, sinks: BuildSinks) =>
    Effect.gen(function*() {
      // A cursor is planned for its first rows unless told that all of them will be read.
      yield* sql`SET LOCAL cursor_tuple_fraction = 1`
      const changeMark = yield* lastChange(bankId)
      const [counted] = yield* sql<{ readonly memories: number }>`
        SELECT count(*)::int AS memories FROM memory_units WHERE bank_id = ${bankId}`
      sinks.expect(counted?.memories ?? 0)
      yield* inPages(
        "brain_memories",
        memoryRows(sql`bank_id = ${bankId}`),
        options.pageRows.memories,
        identity,
        (rows) => sinks.memories(rows.map((row) => readMemory(row)))
      )
      // Both sides of this join are the whole bank's rows: a hash join. Without this, a bank the planner has no
      // statistics for (a branch's read copy, a fork, a bank just filled in one transaction) was estimated at a
      // row or two and joined in a nested loop over the positions: quadratic, 41 s for 17k links at 1k memories.
      yield* sql`SELECT set_config('enable_nestloop', 'off', true)`
      yield* inPages(
        "brain_links",
        sql<{ fromIndex: number; toIndex: number; linkType: string; weight: number }>`
          WITH nodes AS (
            SELECT id, (row_number() OVER (ORDER BY seq) - 1)::int AS position
            FROM memory_units WHERE bank_id = ${bankId}
          )
          SELECT f.position AS from_index, t.position AS to_index, l.link_type, l.weight::float8 AS weight
          FROM memory_links l JOIN nodes f ON f.id = l.from_id JOIN nodes t ON t.id = l.to_id
          WHERE l.bank_id = ${bankId}`,
        options.pageRows.links,
        // Millions of links: read as value arrays, not as objects whose column names are renamed one by one (that
        // renaming was a third of a 100k bank's build); the weight as a double, not through the float4 codec's
        // shortest decimal (layers/storage/Float4.ts), since the graph keeps it as a float32 anyway.
        (fetch) => fetch.values,
        sinks.links
      )
      yield* sql`SELECT set_config('enable_nestloop', 'on', true)`
      yield* inPages(
        "brain_mentions",
        sql<Mention>`SELECT ue.unit_id, ue.entity_id FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
          WHERE u.bank_id = ${bankId}`,
        options.pageRows.links,
        identity,
        sinks.mentions
      )
      const names = yield* sql<{ id: string; canonicalName: string }>`
        SELECT id, canonical_name FROM entities WHERE bank_id = ${bankId}`
      sinks.entityNames(names.map((row) => [row.id, row.canonicalName] as const))
      yield* inPages(
        "brain_chunks",
        sql<{ id: string; chunkIndex: number; text: string }>`
          SELECT id, chunk_index, text FROM chunks WHERE bank_id = ${bankId}`,
        options.pageRows.memories,
        identity,
        (rows) => sinks.chunks(rows.map((row) => [row.id, { chunkIndex: row.chunkIndex, text: row.text }] as const))
      )
      return changeMark
    }).pipe(repeatableRead)

  /**
   * What was written since the marks: memories removed or rewritten (from the change log), memories added (by
   * `seq`) with the entities they name and their links — every link is written with its newer memory, so the new
   * memories' links are all the new links — and the entity names and chunks they need. None when the log was pruned
   * past the brain (`checkHorizon`) or the change is bulk: the caller rebuilds.
   *
   * One statement, so one snapshot without a transaction: a retain waits for its bank's catch-up, and on the embedded
   * tier each statement (and a transaction's `BEGIN` and `COMMIT`) is a turn at the one session, queued behind every
   * other bank's work — seven turns when this was a repeatable-read transaction of five reads. The log's summary comes
   * as one row and each memory as one row with its mentions and links beside it (a `FULL JOIN … ON false` stacks the
   * two shapes without listing every column twice); a chunk's text comes with the first of its memories.
   */
  const delta = (bankId: string, marks: {
    readonly seqMark: number
    readonly changeMark: number
    readonly checkHorizon: boolean
    readonly countLive: boolean
    readonly hasChunk: (id: string) => boolean
  }) =>
    Effect.gen(function*() {
      // One more than the bulk limit: reading that many says "bulk" without reading the rest.
      const most = options.bulkChange + 1
      const prunedBelow = marks.checkHorizon
        ? sql`(SELECT pruned_below::float8 FROM memory_change_horizons WHERE bank_id = ${bankId})`
        : sql`NULL::float8`
      const live = marks.countLive
        ? sql`(SELECT count(*)::float8 FROM memory_units WHERE bank_id = ${bankId})`
        : sql`NULL::float8`
      const rows = yield* sql<DeltaRow & Partial<MemoryRow>>`
        WITH changes AS MATERIALIZED (
          SELECT change_seq, unit_id FROM memory_unit_changes
          WHERE bank_id = ${bankId} AND change_seq > ${marks.changeMark}),
        changed AS MATERIALIZED (SELECT DISTINCT unit_id AS id FROM changes LIMIT ${most}),
        added AS MATERIALIZED (
          SELECT id FROM memory_units WHERE bank_id = ${bankId} AND seq > ${marks.seqMark} ORDER BY seq LIMIT ${most}),
        wanted AS MATERIALIZED (
          SELECT id, true AS is_added FROM added
          UNION ALL
          SELECT u.id, false FROM memory_units u JOIN changed c ON c.id = u.id
          WHERE u.bank_id = ${bankId} AND u.seq <= ${marks.seqMark}),
        summary AS (
          SELECT (SELECT count(*)::int FROM changes) AS change_count,
            (SELECT max(change_seq)::float8 FROM changes) AS last_change_seq,
            (SELECT coalesce(array_agg(id), '{}') FROM changed) AS changed_ids,
            (SELECT count(*)::int FROM added) AS added_count,
            ${prunedBelow} AS pruned_below, ${live} AS live),
        memories AS (
          SELECT m.*,
            CASE WHEN row_number() OVER (PARTITION BY m.chunk_id ORDER BY m.seq) = 1
              THEN (SELECT jsonb_build_array(ch.chunk_index, ch.text) FROM chunks ch WHERE ch.id = m.chunk_id)
            END AS chunk,
            (SELECT jsonb_agg(jsonb_build_array(ue.entity_id, e.canonical_name))
              FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id WHERE ue.unit_id = m.id) AS mentions,
            (SELECT jsonb_agg(jsonb_build_array(l.from_id, l.to_id, l.link_type, l.weight))
              FROM memory_links l WHERE l.from_id = m.id OR l.to_id = m.id) AS links
          FROM (SELECT w.is_added, ${memoryColumns} FROM memory_units JOIN wanted w USING (id)) m)
        SELECT summary.*, memories.* FROM summary FULL JOIN memories ON false
        ORDER BY memories.seq NULLS FIRST`
      const summary = rows.find((row) => row.changeCount !== null)!
      // Entries this brain has not applied were pruned (another node's, after this node's mark expired; or those
      // after an older file): read it whole. One process alone never prunes past its own brain.
      if (marks.checkHorizon && (summary.prunedBelow ?? 0) - 1 > marks.changeMark) {
        yield* Effect.logInfo(`the change log of bank ${bankId} was pruned past this brain; rebuilding it`)
        return undefined
      }
      if (summary.addedCount >= most || summary.changedIds.length >= most) return undefined
      const memories = rows.filter(isMemory)
      const addedRows = memories.filter((row) => row.isAdded)
      const rewrittenRows = memories.filter((row) => !row.isAdded)
      const names = new Map<string, string>()
      const chunks: Array<readonly [string, ChunkText]> = []
      for (const row of memories) {
        for (const [entityId, name] of row.mentions ?? []) names.set(entityId, name)
        if (row.chunk !== null && row.chunkId !== null && !marks.hasChunk(row.chunkId)) {
          chunks.push([row.chunkId, { chunkIndex: row.chunk[0], text: row.chunk[1] }])
        }
      }
      const read = (row: DeltaRow & MemoryRow) => readMemory(row, row.mentions?.map(([entityId]) => entityId))
      return {
        changeCount: summary.changeCount!,
        lastChangeSeq: summary.lastChangeSeq ?? undefined,
        changedIds: summary.changedIds,
        added: addedRows.map(read),
        rewritten: rewrittenRows.map(read),
        links: linksOf(addedRows),
        rewrittenLinks: linksOf(rewrittenRows),
        entityNames: [...names],
        chunks,
        live: summary.live ?? undefined
      } satisfies BrainDelta
    })

  return { build, delta, dataVersion, lastChange, prune }
}

export type BrainReads = ReturnType<typeof makeBrainReads>

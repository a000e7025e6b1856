/**
 * Seeds a bank with a synthetic conversation history fast, in rows shaped like the ones retain writes: the real
 * offline extractor's facts (times, entities), GloVe vectors, one chunk per turn, entities with aliases and
 * mention counts, and temporal/semantic/entity links by retain's link policy (~25 per memory). Bulk SQL through
 * the library's own connection; never on a data directory or schema that a server has open.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Banks, Embeddings } from "../../src/index.ts"
import { modelKey } from "../../src/memory/Reembedding.ts"
import { TableStatistics } from "../../src/storage/TableStatistics.ts"
import { cjkTerms } from "../../src/memory/recall/SearchTerms.ts"
import { chunkHash, contentHash } from "../../src/memory/retain/ContentHash.ts"
import { linkPolicy } from "../../src/memory/retain/MemoryLinks.ts"
import { extractOffline } from "../../src/memory/retain/OfflineExtractor.ts"
import { turnAt } from "./Conversation.ts"

export interface SeedOptions {
  readonly bankId: string
  readonly memories: number
  /** Seed of the turn stream; the load bench retains later turns of the same stream. */
  readonly streamSeed: number
  /** The history ends here (the last turn is said at this time). */
  readonly endsAt: Date
  /** Mark facts as already consolidated, as in a bank whose background work has caught up. */
  readonly consolidated: boolean
}

/** Conversations of 20 turns a minute apart, two sessions a day: 100k memories span about seven years. */
const turnsPerSession = 20
const minute = 60_000
const day = 86_400_000

const saidAt = (options: SeedOptions, n: number) => {
  const fromEnd = options.memories - 1 - n
  const session = Math.floor(fromEnd / turnsPerSession)
  const sessionStart = Math.floor(session / 2) * day + (session % 2) * 6 * 3_600_000
  return new Date(options.endsAt.getTime() - sessionStart - (fromEnd % turnsPerSession) * minute)
}

interface Fact {
  readonly id: string
  readonly chunkId: string
  readonly chunkText: string
  readonly text: string
  readonly factType: "world" | "experience"
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly said: Date
  readonly entityIds: ReadonlyArray<string>
  readonly topic: number
  readonly factIndex: number
}

interface Entity {
  readonly id: string
  readonly alias: string
  readonly name: string
  readonly type: string | null
  count: number
  readonly first: Date
  last: Date
}

interface Link {
  readonly f: string
  readonly t: string
  readonly k: "temporal" | "semantic" | "entity"
  readonly w: number
}

const rowsPerStatement = 2000
const linksPerStatement = 20_000
/** Semantic neighbours are searched among the latest earlier facts on the same topic, not the whole bank. */
const semanticCandidates = 200

/** The turns as retain would store them: one chunk each, the offline extractor's facts, entities resolved by name. */
const history = (options: SeedOptions) => {
  const facts: Array<Fact> = []
  const entities = new Map<string, Entity>()
  for (let n = 0; n < options.memories; n++) {
    const turn = turnAt(options.streamSeed, n)
    const said = saidAt(options, n)
    const chunkId = crypto.randomUUID()
    const extracted = extractOffline({
      text: turn.content,
      context: null,
      mentionedAt: said,
      mode: "concise",
      mission: null,
      customInstructions: null
    })
    extracted.forEach((fact, factIndex) => {
      const entityIds = new Set<string>()
      for (const mention of fact.entities) {
        const alias = mention.name.toLowerCase().replace(/\s+/g, " ").trim()
        let entity = entities.get(alias)
        if (entity === undefined) {
          entity = {
            id: crypto.randomUUID(),
            alias,
            name: mention.name,
            type: mention.type,
            count: 0,
            first: said,
            last: said
          }
          entities.set(alias, entity)
        }
        if (entityIds.has(entity.id)) continue
        entity.count++
        entity.last = said
        entityIds.add(entity.id)
      }
      facts.push({
        id: crypto.randomUUID(),
        chunkId,
        chunkText: turn.content,
        text: fact.text,
        factType: fact.factType,
        occurredStart: fact.occurredStart,
        occurredEnd: fact.occurredEnd,
        said,
        entityIds: [...entityIds],
        topic: turn.topic,
        factIndex
      })
    })
  }
  return { facts, entities: [...entities.values()] }
}

/**
 * The links retain makes for each new memory towards what was stored before it: its temporal predecessors, its
 * nearest vectors above the threshold (unless linked the other way already), the latest memories of each entity.
 */
function* linksOf(facts: ReadonlyArray<Fact>, vectors: ReadonlyArray<Float32Array>): Generator<Link> {
  const norms = vectors.map((v) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1)
  const cosine = (a: number, b: number) => {
    const va = vectors[a]!
    const vb = vectors[b]!
    let dot = 0
    for (let i = 0; i < va.length; i++) dot += va[i]! * vb[i]!
    return dot / (norms[a]! * norms[b]!)
  }
  const byTopic = new Map<number, Array<number>>()
  const byEntity = new Map<string, Array<number>>()
  const semantic = new Set<string>()
  for (let i = 0; i < facts.length; i++) {
    const fact = facts[i]!
    for (let back = 1; back <= linkPolicy.temporalNeighbours && i - back >= 0; back++) {
      const gap = fact.said.getTime() - facts[i - back]!.said.getTime()
      if (gap > linkPolicy.temporalWindowDays * day) break
      yield { f: fact.id, t: facts[i - back]!.id, k: "temporal", w: (1 / (1 + back)) * Math.exp(-gap / day) }
    }
    const sameTopic = byTopic.get(fact.topic) ?? []
    byTopic.set(fact.topic, sameTopic)
    const nearest = sameTopic.slice(-semanticCandidates)
      .map((j) => ({ j, similarity: cosine(i, j) }))
      .filter((candidate) => candidate.similarity >= linkPolicy.semanticThreshold)
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, linkPolicy.semanticNeighbours)
    for (const { j, similarity } of nearest) {
      if (semantic.has(`${facts[j]!.id}>${fact.id}`)) continue
      semantic.add(`${fact.id}>${facts[j]!.id}`)
      yield { f: fact.id, t: facts[j]!.id, k: "semantic", w: similarity }
    }
    sameTopic.push(i)
    const targets = new Set<string>()
    for (const entityId of fact.entityIds) {
      const earlier = byEntity.get(entityId) ?? []
      byEntity.set(entityId, earlier)
      for (const j of earlier.slice(-linkPolicy.entityNeighbours)) targets.add(facts[j]!.id)
      earlier.push(i)
      if (earlier.length > 4 * linkPolicy.entityNeighbours) {
        earlier.splice(0, earlier.length - linkPolicy.entityNeighbours)
      }
    }
    for (const target of targets) yield { f: fact.id, t: target, k: "entity", w: 1 }
  }
}

const iso = (date: Date | null) => date === null ? null : date.toISOString()

/** pgvector's text form with 9 significant digits: the same float32 values as `PgVector.param`, in half the JSON. */
const vectorText = (vector: Float32Array) => `[${Array.from(vector, (x) => x.toPrecision(9)).join(",")}]`

/**
 * Runs a bulk load with the memory tables' secondary indexes and the links' keys dropped, then rebuilds them from
 * their own definitions in the catalog: the same schema, built in one pass instead of row by row (HNSW inserts
 * dominate otherwise). The memory setting applies inside one transaction, so a pooled connection gets it too.
 */
const withoutIndexes = <A, E, R>(load: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const indexes = yield* sql<{ name: string; definition: string }>`
      SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i
      WHERE i.indrelid IN ('memory_units'::regclass, 'memory_links'::regclass, 'unit_entities'::regclass)
        AND NOT i.indisprimary AND NOT i.indisunique
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`
    const constraints = yield* sql<{ name: string; definition: string }>`
      SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE conrelid = 'memory_links'::regclass AND contype IN ('p', 'f')`
    for (const index of indexes) yield* sql.unsafe(`DROP INDEX ${index.name}`)
    for (const constraint of constraints) {
      yield* sql.unsafe(`ALTER TABLE memory_links DROP CONSTRAINT ${constraint.name}`)
    }
    const result = yield* load
    for (const constraint of constraints) {
      yield* sql.unsafe(`ALTER TABLE memory_links ADD CONSTRAINT ${constraint.name} ${constraint.definition}`)
    }
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL maintenance_work_mem = '512MB'`
      for (const index of indexes) yield* sql.unsafe(index.definition)
    }))
    return result
  })

export const seedBank = Effect.fn("SyntheticBank.seed")(function*(options: SeedOptions) {
  const sql = yield* SqlClient.SqlClient
  const embeddings = yield* Embeddings
  const banks = yield* Banks
  const { bankId } = options
  yield* banks.ensure(bankId)
  const model = modelKey(embeddings.identity)
  const { facts, entities } = history(options)

  for (let offset = 0; offset < entities.length; offset += rowsPerStatement) {
    const rows = JSON.stringify(
      entities.slice(offset, offset + rowsPerStatement).map((e) => ({
        ...e,
        first: e.first.toISOString(),
        last: e.last.toISOString()
      }))
    )
    yield* sql`INSERT INTO entities (id, bank_id, canonical_name, entity_type, mention_count, first_seen, last_seen)
      SELECT x.id, ${bankId}, x.name, x.type, x.count, x.first, x.last
      FROM jsonb_to_recordset(${rows}::jsonb) AS x(id text, name text, type text, count int, first timestamptz, last timestamptz)`
    yield* sql`INSERT INTO entity_aliases (entity_id, bank_id, alias)
      SELECT x.id, ${bankId}, x.alias FROM jsonb_to_recordset(${rows}::jsonb) AS x(id text, alias text)`
  }

  yield* withoutIndexes(Effect.gen(function*() {
    const vectors: Array<Float32Array> = []
    for (let offset = 0; offset < facts.length; offset += rowsPerStatement) {
      const slice = facts.slice(offset, offset + rowsPerStatement)
      const embedded = yield* embeddings.embedDocuments(slice.map((fact) => fact.text))
      vectors.push(...embedded)
      const chunks = [...new Map(slice.map((fact) => [fact.chunkId, fact.chunkText])).entries()]
        .map(([id, text]) => ({ id, text, hash: chunkHash(text) }))
      yield* sql`INSERT INTO chunks (id, bank_id, document_id, chunk_index, text, content_hash)
        SELECT x.id, ${bankId}, NULL, 0, x.text, x.hash
        FROM jsonb_to_recordset(${JSON.stringify(chunks)}::jsonb) AS x(id text, text text, hash text)`
      const units = slice.map((fact, i) => ({
        ord: offset + i,
        id: fact.id,
        text: fact.text,
        fact_type: fact.factType,
        occurred_start: iso(fact.occurredStart),
        occurred_end: iso(fact.occurredEnd),
        mentioned_at: fact.said.toISOString(),
        chunk_id: fact.chunkId,
        content_hash: contentHash(fact.text),
        embedding: vectorText(embedded[i]!),
        cjk: cjkTerms(fact.text),
        fact_index: fact.factIndex,
        consolidated_at: options.consolidated ? fact.said.toISOString() : null
      }))
      // In order, so `seq` follows the conversation as it does when turns are retained one after another.
      yield* sql`
        INSERT INTO memory_units (id, bank_id, text, fact_type, occurred_start, occurred_end, mentioned_at, chunk_id,
          content_hash, embedding, embedding_model, search_text, item_index, fact_index, consolidated_at, created_at,
          updated_at)
        SELECT x.id, ${bankId}, x.text, x.fact_type, x.occurred_start, x.occurred_end, x.mentioned_at, x.chunk_id,
          x.content_hash, x.embedding::vector, ${model}, to_tsvector('english', x.text) || to_tsvector('simple', x.cjk),
          0, x.fact_index, x.consolidated_at, x.mentioned_at, x.mentioned_at
        FROM jsonb_to_recordset(${JSON.stringify(units)}::jsonb) AS x(ord int, id text, text text, fact_type text,
          occurred_start timestamptz, occurred_end timestamptz, mentioned_at timestamptz, chunk_id text,
          content_hash text, embedding text, cjk text, fact_index int, consolidated_at timestamptz)
        ORDER BY x.ord`
      const unitEntities = slice.flatMap((fact) =>
        fact.entityIds.map((entityId) => ({ unit_id: fact.id, entity_id: entityId }))
      )
      yield* sql`INSERT INTO unit_entities (unit_id, entity_id, unit_seq)
        SELECT x.unit_id, x.entity_id, u.seq
        FROM jsonb_to_recordset(${JSON.stringify(unitEntities)}::jsonb) AS x(unit_id text, entity_id text)
        JOIN memory_units u ON u.id = x.unit_id`
    }
    let links: Array<Link> = []
    for (const link of linksOf(facts, vectors)) {
      links.push(link)
      if (links.length < linksPerStatement) continue
      yield* insertLinks(bankId, links)
      links = []
    }
    if (links.length > 0) yield* insertLinks(bankId, links)
  }))
  // What the server's own maintenance does after retains: ANALYZE, and on PGlite a VACUUM too.
  yield* (yield* TableStatistics).maintain
  yield* sql`ANALYZE chunks`
  const [counts] = yield* sql<{ memories: number; links: number; entities: number }>`
    SELECT (SELECT count(*)::int FROM memory_units WHERE bank_id = ${bankId}) AS memories,
      (SELECT count(*)::int FROM memory_links WHERE bank_id = ${bankId}) AS links,
      (SELECT count(*)::int FROM entities WHERE bank_id = ${bankId}) AS entities`
  return counts!
})

const insertLinks = Effect.fnUntraced(function*(bankId: string, links: ReadonlyArray<Link>) {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO memory_links (bank_id, from_id, to_id, link_type, weight)
    SELECT ${bankId}, x.f, x.t, x.k, x.w FROM jsonb_to_recordset(${JSON.stringify(links)}::jsonb)
      AS x(f text, t text, k text, w real)`
})

/**
 * Seeds `memories` into the bank unless it already holds some (a bench run again on the same data directory reuses
 * them: seeding 100k takes tens of minutes); answers how many memories it holds.
 */
export const seedUnlessHeld = Effect.fn("SyntheticBank.seedUnlessHeld")(function*(
  bankId: string,
  memories: number,
  dataDir: string
) {
  const sql = yield* SqlClient.SqlClient
  const held =
    (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE bank_id = ${bankId}`)[0]?.n ??
      0
  if (held > 0) return held
  const t0 = performance.now()
  yield* seedBank({ bankId, memories, streamSeed: 1, endsAt: new Date(), consolidated: true })
  console.error(`seeded ${memories} memories in ${((performance.now() - t0) / 1000).toFixed(0)} s in ${dataDir}`)
  return memories
})

/**
 * Opinions are memory units of type `opinion` with a confidence (0–1): what the bank concluded from its own
 * reflections. This store writes them (with embedding and full-text index, so recall finds them like any memory),
 * finds one by content, lists a bank's opinions with their reinforcement watermark, finds the newer facts close to
 * an opinion, and moves confidence and watermark together in one statement so a re-run never counts a fact twice.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { param } from "../../storage/VectorParam.ts"
import { makeCoalesced } from "../../storage/Coalesced.ts"
import { cjkTerms } from "../../memory/recall/SearchTerms.ts"

export interface NewOpinion {
  readonly id: string
  readonly bankId: string
  readonly text: string
  readonly confidence: number
  readonly contentHash: string
  readonly sourceFactIds: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly operationId: string
  readonly embedding: Float32Array
  readonly embeddingModel: string
  readonly mentionedAt: Date
}

export interface OpinionRow {
  readonly id: string
  readonly text: string
  readonly confidence: number
  /** Facts up to this retain sequence number have already been weighed. */
  readonly reinforcedSeq: number
}

export interface RelatedFact {
  readonly id: string
  readonly text: string
  readonly seq: number
  readonly similarity: number
}

export class OpinionStore extends Context.Service<OpinionStore, {
  /** Inserts the opinion unless its id exists (a re-run of the same operation); true when it was written. */
  readonly insert: (opinion: NewOpinion) => Effect.Effect<boolean>
  readonly findByHash: (bankId: string, contentHash: string) => Effect.Effect<OpinionRow | undefined>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<OpinionRow>>
  readonly hasOpinions: (bankId: string) => Effect.Effect<boolean>
  /** The bank's newest fact sequence number (0 when it has none). */
  readonly latestFactSeq: (bankId: string) => Effect.Effect<number>
  /**
   * Facts retained after `afterSeq` and up to `upToSeq` whose embedding is closest to the opinion's, best first.
   * The upper bound is the watermark the caller will record: a fact retained meanwhile is left for the next run.
   */
  readonly relatedFacts: (
    bankId: string,
    opinionId: string,
    afterSeq: number,
    upToSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<RelatedFact>>
  /** Sets confidence and watermark only if the watermark is still `fromSeq`; false when another run got there first. */
  readonly reinforce: (id: string, fromSeq: number, toSeq: number, confidence: number) => Effect.Effect<boolean>
}>()("engram/reflect/opinions/OpinionStore") {
  static readonly layer = Layer.effect(
    OpinionStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const latestFactSeq = (bankId: string) =>
        sql<{ seq: number | null }>`SELECT max(seq)::float8 AS seq FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience')`.pipe(
          Effect.map((rows) => rows[0]?.seq ?? 0),
          Effect.orDie
        )

      const insert = Effect.fn("OpinionStore.insert")(function*(opinion: NewOpinion) {
        const watermark = yield* latestFactSeq(opinion.bankId)
        const dims = sql.literal(String(Math.trunc(opinion.embedding.length)))
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO memory_units (id, bank_id, text, fact_type, mentioned_at, tags, source_fact_ids, confidence,
            content_hash, embedding, embedding_model, search_text, operation_id, reinforced_seq)
          VALUES (${opinion.id}, ${opinion.bankId}, ${opinion.text}, 'opinion', ${opinion.mentionedAt.toISOString()},
            ${[...opinion.tags]}::text[], ${[...opinion.sourceFactIds]}::text[], ${opinion.confidence},
            ${opinion.contentHash}, ${param(opinion.embedding)}::vector(${dims}), ${opinion.embeddingModel},
            to_tsvector('english', ${opinion.text}) || to_tsvector('simple', ${cjkTerms(opinion.text)}),
            ${opinion.operationId}, ${watermark})
          ON CONFLICT (id) DO NOTHING
          RETURNING id`.pipe(Effect.orDie)
        return inserted.length > 0
      })

      const opinionRows = (where: ReturnType<SqlClient.SqlClient["and"]>) =>
        sql<OpinionRow>`
          SELECT id, text, coalesce(confidence, 0.5)::float8 AS confidence, coalesce(reinforced_seq, seq)::float8 AS reinforced_seq
          FROM memory_units u WHERE ${where} ORDER BY seq`.pipe(Effect.orDie)

      const findByHash = (bankId: string, contentHash: string) =>
        opinionRows(
          sql.and([sql`u.bank_id = ${bankId}`, sql`u.fact_type = 'opinion'`, sql`u.content_hash = ${contentHash}`])
        )
          .pipe(Effect.map((rows) => rows[0]))

      const list = (bankId: string) => opinionRows(sql.and([sql`u.bank_id = ${bankId}`, sql`u.fact_type = 'opinion'`]))

      // Asked after every retain that added facts: concurrent ones share a statement (`Coalesced`).
      const holdingOpinions = yield* makeCoalesced({
        name: "OpinionStore.hasOpinions",
        maxBatch: 200,
        batch: (bankIds: ReadonlyArray<string>) =>
          sql<{ bankId: string }>`SELECT b.bank_id FROM banks b WHERE b.bank_id IN ${sql.in([...new Set(bankIds)])}
            AND EXISTS (SELECT 1 FROM memory_units u WHERE u.bank_id = b.bank_id AND u.fact_type = 'opinion')`.pipe(
            Effect.map((rows) => {
              const holding = new Set(rows.map((row) => row.bankId))
              return bankIds.map((bankId) => holding.has(bankId))
            })
          )
      })
      const hasOpinions = (bankId: string) => holdingOpinions(bankId).pipe(Effect.orDie)

      const relatedFacts = Effect.fn("OpinionStore.relatedFacts")(function*(
        bankId: string,
        opinionId: string,
        afterSeq: number,
        upToSeq: number,
        limit: number
      ) {
        const found = yield* sql<{ dims: number | null; model: string | null }>`
          SELECT vector_dims(embedding) AS dims, embedding_model AS model FROM memory_units WHERE id = ${opinionId}`
        const dims = found[0]?.dims
        if (dims === undefined || dims === null) return []
        // The dimension comes from the stored vector; it must be literal for the per-dimension index to apply.
        const typed = sql.literal(`vector(${Math.trunc(dims)})`)
        return yield* sql<RelatedFact>`
          SELECT f.id, f.text, f.seq::float8 AS seq, 1 - (f.embedding::${typed} <=> o.embedding::${typed}) AS similarity
          FROM memory_units f, memory_units o
          WHERE o.id = ${opinionId} AND f.bank_id = ${bankId} AND f.fact_type IN ('world', 'experience')
            AND f.seq > ${afterSeq} AND f.seq <= ${upToSeq} AND f.embedding_model IS NOT DISTINCT FROM ${
          found[0]?.model ?? null
        }
            AND vector_dims(f.embedding) = ${dims}
          ORDER BY f.embedding::${typed} <=> o.embedding::${typed}
          LIMIT ${limit}`
      }, Effect.orDie)

      const reinforce = (id: string, fromSeq: number, toSeq: number, confidence: number) =>
        sql`UPDATE memory_units SET confidence = ${confidence}, reinforced_seq = ${toSeq}, updated_at = now()
          WHERE id = ${id} AND coalesce(reinforced_seq, seq) = ${fromSeq} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )

      return OpinionStore.of({ insert, findByHash, list, hasOpinions, latestFactSeq, relatedFacts, reinforce })
    })
  )
}

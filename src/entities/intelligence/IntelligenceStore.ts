/** Reads and writes the `entity_intelligence` table: one current document per bank, replaced on every recompute. */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { EntityIntelligenceResponse } from "../../domain/EntityState.ts"

interface IntelligenceRow {
  readonly bankId: string
  readonly computedAt: Date
  readonly entityCount: number
  readonly sourceEntityCount: number
  readonly entitySnapshotHash: string
  readonly content: string
  readonly structuredContent: Record<string, unknown>
  readonly entityContext: Record<string, unknown>
  readonly deltaMetadata: Record<string, unknown>
  readonly llmModel: string
  readonly promptVersion: string
}

export const findIntelligence = Effect.fn("IntelligenceStore.find")(function*(bankId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<IntelligenceRow>`SELECT bank_id, computed_at, entity_count, source_entity_count,
      entity_snapshot_hash, content, structured_content, entity_context, delta_metadata, llm_model, prompt_version
    FROM entity_intelligence WHERE bank_id = ${bankId}`
  return Option.map(Option.fromNullishOr(rows[0]), (row): EntityIntelligenceResponse => ({
    bank_id: row.bankId,
    computed_at: row.computedAt.toISOString(),
    entity_count: row.entityCount,
    source_entity_count: row.sourceEntityCount,
    entity_snapshot_hash: row.entitySnapshotHash,
    content: row.content,
    structured_content: row.structuredContent,
    entity_context: row.entityContext,
    delta_metadata: row.deltaMetadata,
    llm_model: row.llmModel,
    prompt_version: row.promptVersion
  }))
})

export const saveIntelligence = Effect.fn("IntelligenceStore.save")(function*(
  intelligence: Omit<EntityIntelligenceResponse, "computed_at">
) {
  const sql = yield* SqlClient.SqlClient
  const columns = {
    entityCount: intelligence.entity_count,
    sourceEntityCount: intelligence.source_entity_count,
    entitySnapshotHash: intelligence.entity_snapshot_hash,
    content: intelligence.content,
    structuredContent: JSON.stringify(intelligence.structured_content),
    entityContext: JSON.stringify(intelligence.entity_context),
    deltaMetadata: JSON.stringify(intelligence.delta_metadata),
    llmModel: intelligence.llm_model,
    promptVersion: intelligence.prompt_version
  }
  yield* sql`INSERT INTO entity_intelligence ${sql.insert({ bankId: intelligence.bank_id, ...columns })}
    ON CONFLICT (bank_id) DO UPDATE SET ${sql.update(columns)}, computed_at = now()`
})

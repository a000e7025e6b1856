/**
 * A memory unit as the reads select it (`UnitRow`), and its view as clients see it (`toUnitView`). Apart from
 * `MemoryUnits` because the brain returns the same rows from memory: the brain imports this, not the service that
 * reads them from SQL (which itself sits above the brain).
 */
import type { MemoryUnitView } from "../domain/Memory.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"

export interface UnitRow {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly context: string | null
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly mentionedAt: Date | null
  readonly documentId: string | null
  readonly chunkId: string | null
  readonly metadata: Record<string, string> | null
  readonly tags: ReadonlyArray<string> | null
  readonly sourceFactIds: ReadonlyArray<string> | null
  readonly confidence: number | null
  readonly createdAt: Date | null
  readonly entityNames: ReadonlyArray<string> | null
  /** The newer fact that replaced this one (a contradiction corrected at retain); absent where not selected. */
  readonly supersededBy?: string | null
  /** When the memory is forgotten; absent where not selected. */
  readonly expiresAt?: Date | null
}

export const toUnitView = (row: UnitRow): MemoryUnitView => ({
  id: row.id,
  text: row.text,
  type: row.factType,
  fact_type: row.factType,
  entities: row.entityNames ?? [],
  context: row.context,
  occurred_start: iso(row.occurredStart),
  occurred_end: iso(row.occurredEnd),
  mentioned_at: iso(row.mentionedAt),
  document_id: row.documentId,
  metadata: row.metadata ?? {},
  chunk_id: row.chunkId,
  tags: row.tags ?? [],
  source_fact_ids: row.sourceFactIds,
  confidence: row.confidence,
  created_at: iso(row.createdAt),
  superseded_by: row.supersededBy ?? null,
  ...(row.expiresAt == null ? {} : { expires_at: row.expiresAt.toISOString() })
})

/** A plain memory for the brain's record tests: a world fact `m-<n>` with a vector, a minute after the one before. */
import type { MemoryInput } from "../../src/brain/records/MemoryRecords.ts"

export const plainMemory = (n: number, vector: Float32Array): MemoryInput => ({
  id: `m-${n}`,
  seq: n + 1,
  text: `memory ${n}`,
  factType: "world",
  context: null,
  occurredStart: null,
  occurredEnd: null,
  mentionedAt: Date.UTC(2024, 0, 1) + n * 60_000,
  createdAt: Date.UTC(2025, 0, 1),
  documentId: null,
  chunkId: null,
  metadata: null,
  tags: [],
  sourceFactIds: null,
  confidence: null,
  supersededBy: null,
  expiresAt: null,
  entityIds: [],
  embedding: vector
})

/**
 * Persistence of banks: create, read, update, delete, and the statistics computed from the bank's tables.
 * Deleting a bank removes everything it owns through foreign keys with ON DELETE CASCADE.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Bank, BankSettings, BankStatsResponse } from "../domain/Bank.ts"
import { ExtractionMode } from "../domain/Bank.ts"
import { decodeEntitySettings } from "../domain/EntitySettings.ts"
import { decodePipelineOverrides } from "../domain/PipelineSettings.ts"
import { decodeDreamOverrides } from "../dreams/DreamConfig.ts"
import { decodeRetentionSettings } from "../domain/Retention.ts"
import { emptySettings } from "./BankSettings.ts"
import { makeCoalesced } from "../storage/Coalesced.ts"

const BankRow = Schema.Struct({
  bankId: Schema.String,
  name: Schema.NullOr(Schema.String),
  reflectMission: Schema.NullOr(Schema.String),
  retainMission: Schema.NullOr(Schema.String),
  retainExtractionMode: Schema.NullOr(ExtractionMode),
  retainCustomInstructions: Schema.NullOr(Schema.String),
  retainChunkSize: Schema.NullOr(Schema.Number),
  bankPreset: Schema.NullOr(Schema.String),
  enableObservations: Schema.NullOr(Schema.Boolean),
  observationsMission: Schema.NullOr(Schema.String),
  dispositionSkepticism: Schema.Number,
  dispositionLiteralism: Schema.Number,
  dispositionEmpathy: Schema.Number,
  entitySettings: Schema.Unknown,
  dreamSettings: Schema.Unknown,
  pipelineSettings: Schema.Unknown,
  retentionSettings: Schema.Unknown,
  lastWriteAt: Schema.NullOr(Schema.Date),
  lastConsolidatedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
type BankRow = typeof BankRow.Type

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(BankRow))

const toBank = (row: BankRow): Bank => ({
  bankId: row.bankId,
  name: row.name,
  reflectMission: row.reflectMission,
  retainMission: row.retainMission,
  retainExtractionMode: row.retainExtractionMode,
  retainCustomInstructions: row.retainCustomInstructions,
  retainChunkSize: row.retainChunkSize,
  bankPreset: row.bankPreset,
  enableObservations: row.enableObservations,
  observationsMission: row.observationsMission,
  disposition: {
    skepticism: row.dispositionSkepticism,
    literalism: row.dispositionLiteralism,
    empathy: row.dispositionEmpathy
  },
  entitySettings: decodeEntitySettings(row.entitySettings),
  dreamSettings: decodeDreamOverrides(row.dreamSettings),
  pipelineSettings: decodePipelineOverrides(row.pipelineSettings),
  retentionSettings: decodeRetentionSettings(row.retentionSettings),
  lastWriteAt: row.lastWriteAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

const toColumns = (settings: BankSettings) => ({
  name: settings.name,
  reflectMission: settings.reflectMission,
  retainMission: settings.retainMission,
  retainExtractionMode: settings.retainExtractionMode,
  retainCustomInstructions: settings.retainCustomInstructions,
  retainChunkSize: settings.retainChunkSize,
  bankPreset: settings.bankPreset,
  enableObservations: settings.enableObservations,
  observationsMission: settings.observationsMission,
  dispositionSkepticism: settings.disposition.skepticism,
  dispositionLiteralism: settings.disposition.literalism,
  dispositionEmpathy: settings.disposition.empathy,
  entitySettings: JSON.stringify(settings.entitySettings),
  dreamSettings: JSON.stringify(settings.dreamSettings),
  pipelineSettings: JSON.stringify(settings.pipelineSettings),
  retentionSettings: JSON.stringify(settings.retentionSettings)
})

export interface BankStatsCounts extends Omit<BankStatsResponse, "bank_id"> {}

export class BankStore extends Context.Service<BankStore, {
  readonly list: Effect.Effect<ReadonlyArray<Bank>>
  readonly find: (bankId: string) => Effect.Effect<Option.Option<Bank>>
  /** Inserts the bank with the given settings, or replaces the settings of the existing one. */
  readonly save: (bankId: string, settings: BankSettings) => Effect.Effect<Bank>
  /** Returns the bank, creating it with default settings when it does not exist yet. */
  readonly ensure: (bankId: string) => Effect.Effect<Bank>
  readonly remove: (bankId: string) => Effect.Effect<boolean>
  readonly stats: (bankId: string) => Effect.Effect<BankStatsCounts>
}>()("engram/bank/BankStore") {
  static readonly layer = Layer.effect(
    BankStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((found) => found.map(toBank)), Effect.orDie)

      // Every retain reads its bank's row first (its settings): concurrent reads share a statement (`Coalesced`).
      const findCoalesced = yield* makeCoalesced({
        name: "BankStore.find",
        maxBatch: 200,
        batch: (bankIds: ReadonlyArray<string>) =>
          rows(sql`SELECT * FROM banks WHERE bank_id IN ${sql.in([...new Set(bankIds)])}`).pipe(
            Effect.map((found) => {
              const byId = new Map(found.map((bank) => [bank.bankId, bank]))
              return bankIds.map((bankId) => Option.fromNullishOr(byId.get(bankId)))
            })
          )
      })
      const find = (bankId: string) => findCoalesced(bankId).pipe(Effect.withSpan("BankStore.find"))

      const save = Effect.fn("BankStore.save")(function*(bankId: string, settings: BankSettings) {
        const columns = toColumns(settings)
        const saved = yield* rows(sql`
          INSERT INTO banks ${sql.insert({ bankId, ...columns })}
          ON CONFLICT (bank_id) DO UPDATE SET ${sql.update(columns)}, updated_at = now()
          RETURNING *`)
        return saved[0]!
      })

      // Nearly every call finds the bank (a retain into an existing one): one read, and the insert only when missing.
      const ensure = Effect.fn("BankStore.ensure")(function*(bankId: string) {
        const existing = yield* find(bankId)
        if (Option.isSome(existing)) return existing.value
        yield* sql`INSERT INTO banks ${sql.insert({ bankId, ...toColumns(emptySettings) })}
          ON CONFLICT (bank_id) DO NOTHING`.pipe(Effect.orDie)
        return Option.getOrThrow(yield* find(bankId))
      })

      const remove = Effect.fn("BankStore.remove")(function*(bankId: string) {
        const deleted = yield* Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM banks WHERE bank_id = ${bankId} RETURNING bank_id`
          // The units' trigger logged every cascaded deletion for the bank's brain, which goes with the bank.
          yield* sql`DELETE FROM memory_unit_changes WHERE bank_id = ${bankId}`
          return rows
        }).pipe(sql.withTransaction, Effect.orDie)
        return deleted.length > 0
      })

      const countBy = (query: Effect.Effect<ReadonlyArray<Record<string, unknown>>, unknown>) =>
        query.pipe(
          Effect.orDie,
          Effect.map((found) => Object.fromEntries(found.map((row) => [String(row["key"]), Number(row["count"])])))
        )

      // The memory and link counts are kept by triggers in the writes' own transactions (`bank_counts`, migration
      // 0039): a call reads a few rows, not every memory and link of the bank.
      const stats = Effect.fn("BankStore.stats")(function*(bankId: string) {
        const [counts, documents, operations, consolidation] = yield* Effect.all([
          sql<{ factType: string; linkType: string; count: number }>`SELECT fact_type, link_type, count::int AS count
            FROM bank_counts WHERE bank_id = ${bankId} AND count <> 0 ORDER BY fact_type, link_type`.pipe(Effect.orDie),
          sql`SELECT count(*)::int AS count FROM documents WHERE bank_id = ${bankId}`.pipe(Effect.orDie),
          countBy(sql`SELECT status AS key, count(*)::int AS count FROM operations
            WHERE bank_id = ${bankId} AND parent_id IS NULL GROUP BY status`),
          sql`SELECT
              (SELECT count(*)::int FROM memory_units WHERE bank_id = ${bankId} AND consolidated_at IS NULL
                AND fact_type IN ('world', 'experience')) AS pending,
              last_consolidated_at AS last, last_write_at AS last_write, last_memory_write_at AS last_memory_write
            FROM banks WHERE bank_id = ${bankId}`.pipe(Effect.orDie)
        ], { concurrency: "unbounded" })
        const nodes: Record<string, number> = {}
        const links: Record<string, number> = {}
        const linksByFact: Record<string, number> = {}
        const linksBreakdown: Record<string, Record<string, number>> = {}
        for (const row of counts) {
          if (row.linkType === "") {
            nodes[row.factType] = row.count
            continue
          }
          links[row.linkType] = (links[row.linkType] ?? 0) + row.count
          linksByFact[row.factType] = (linksByFact[row.factType] ?? 0) + row.count
          linksBreakdown[row.factType] = { ...linksBreakdown[row.factType], [row.linkType]: row.count }
        }
        const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0)
        const last = consolidation[0]?.["last"]
        const iso = (value: unknown) => value instanceof Date ? value.toISOString() : null
        const zeroFactTypes = { world: 0, experience: 0, observation: 0, opinion: 0 }
        return {
          total_nodes: sum(nodes),
          total_links: sum(links),
          total_documents: Number(documents[0]?.["count"] ?? 0),
          nodes_by_fact_type: { ...zeroFactTypes, ...nodes },
          links_by_link_type: links,
          links_by_fact_type: linksByFact,
          links_breakdown: linksBreakdown,
          pending_operations: (operations["pending"] ?? 0) + (operations["running"] ?? 0),
          failed_operations: operations["failed"] ?? 0,
          last_consolidated_at: last instanceof Date ? last.toISOString() : null,
          pending_consolidation: Number(consolidation[0]?.["pending"] ?? 0),
          total_observations: nodes["observation"] ?? 0,
          last_write_at: iso(consolidation[0]?.["lastWrite"]),
          last_memory_write_at: iso(consolidation[0]?.["lastMemoryWrite"])
        }
      })

      return BankStore.of({
        // Memory repo branch workspaces (`__repo__…`, src/repos) are hidden banks: never listed.
        list: rows(sql`SELECT * FROM banks WHERE NOT starts_with(bank_id, '__repo__') ORDER BY bank_id`),
        find,
        save,
        ensure,
        remove,
        stats
      })
    })
  )
}

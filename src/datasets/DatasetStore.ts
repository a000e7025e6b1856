/**
 * The taste tables: datasets and their sets. Only storage — no validation, no models; the `Datasets` service
 * decides what may change. Sets are inserted in bulk from one JSON parameter (`jsonb_to_recordset`), so an
 * import of thousands of rows is one statement.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { DatasetResponse, SchemaType, SetResponse, SetStatus, TransformLogEntry } from "../domain/Dataset.ts"
import {
  SchemaType as SchemaTypeSchema,
  SetStatus as SetStatusSchema,
  TransformLogEntry as LogEntrySchema
} from "../domain/Dataset.ts"
import type { JsonObject } from "./Payloads.ts"

const JsonObjectSchema = Schema.Record(Schema.String, Schema.Unknown)

const DatasetRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  schemaType: SchemaTypeSchema,
  tasteTags: Schema.Array(Schema.String),
  tasteProfile: JsonObjectSchema,
  createdAt: Schema.Date,
  updatedAt: Schema.Date,
  setCount: Schema.Number,
  seedCount: Schema.Number,
  statusCounts: Schema.NullOr(Schema.Record(Schema.String, Schema.Number))
})
export type DatasetRow = typeof DatasetRow.Type

const SetRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  datasetId: Schema.String,
  setKey: Schema.String,
  variantIndex: Schema.Number,
  parentSetId: Schema.NullOr(Schema.String),
  sourcePayload: JsonObjectSchema,
  workingPayload: JsonObjectSchema,
  transformLog: Schema.Array(LogEntrySchema),
  status: SetStatusSchema,
  tasteTags: Schema.Array(Schema.String),
  memoryUnitIds: Schema.Array(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type SetRow = typeof SetRow.Type

const decodeDatasets = Schema.decodeUnknownEffect(Schema.Array(DatasetRow))
const decodeSets = Schema.decodeUnknownEffect(Schema.Array(SetRow))
/** Sets written by one statement of `insertSets`. */
const setsPerInsert = 500

export const toDatasetResponse = (row: DatasetRow): DatasetResponse => ({
  id: row.id,
  bank_id: row.bankId,
  name: row.name,
  description: row.description,
  schema_type: row.schemaType,
  taste_tags: row.tasteTags,
  taste_profile: row.tasteProfile,
  set_count: row.setCount,
  seed_count: row.seedCount,
  variant_count: row.setCount - row.seedCount,
  status_counts: row.statusCounts ?? {},
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString()
})

export const toSetResponse = (row: SetRow): SetResponse => ({
  id: row.id,
  dataset_id: row.datasetId,
  set_key: row.setKey,
  variant_index: row.variantIndex,
  parent_set_id: row.parentSetId,
  source_payload: row.sourcePayload,
  working_payload: row.workingPayload,
  transform_log: row.transformLog,
  status: row.status,
  taste_tags: row.tasteTags,
  memory_unit_ids: row.memoryUnitIds,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString()
})

export interface NewSet {
  readonly id: string
  readonly setKey: string
  readonly variantIndex: number
  readonly parentSetId: string | null
  readonly sourcePayload: JsonObject
  readonly workingPayload: JsonObject
  readonly transformLog: ReadonlyArray<TransformLogEntry>
  readonly tasteTags: ReadonlyArray<string>
}

export interface SetChange {
  readonly workingPayload?: JsonObject
  /** Appended to the log, never replacing it. */
  readonly appendLog?: ReadonlyArray<TransformLogEntry>
  readonly status?: SetStatus
  readonly tasteTags?: ReadonlyArray<string>
  readonly memoryUnitIds?: ReadonlyArray<string>
}

export class DatasetStore extends Context.Service<DatasetStore, {
  readonly createDataset: (row: {
    readonly id: string
    readonly bankId: string
    readonly name: string
    readonly description: string | null
    readonly schemaType: SchemaType
    readonly tasteTags: ReadonlyArray<string>
  }) => Effect.Effect<DatasetRow>
  readonly listDatasets: (bankId: string) => Effect.Effect<ReadonlyArray<DatasetRow>>
  readonly findDataset: (bankId: string, id: string) => Effect.Effect<Option.Option<DatasetRow>>
  readonly updateDataset: (bankId: string, id: string, fields: {
    readonly name: string
    readonly description: string | null
    readonly tasteTags: ReadonlyArray<string>
    readonly tasteProfile: JsonObject
  }) => Effect.Effect<void>
  readonly deleteDataset: (bankId: string, id: string) => Effect.Effect<Option.Option<number>>
  readonly seedCount: (datasetId: string) => Effect.Effect<number>
  readonly insertSets: (
    bankId: string,
    datasetId: string,
    sets: ReadonlyArray<NewSet>
  ) => Effect.Effect<ReadonlyArray<SetRow>>
  readonly listSets: (datasetId: string, filter: {
    readonly status?: SetStatus | undefined
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<{ readonly sets: ReadonlyArray<SetRow>; readonly total: number }>
  /** Every set of the dataset in export order (set key, then variant index). */
  readonly allSets: (datasetId: string) => Effect.Effect<ReadonlyArray<SetRow>>
  readonly findSets: (bankId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<SetRow>>
  readonly maxVariantIndex: (datasetId: string, setKey: string) => Effect.Effect<number>
  readonly updateSet: (setId: string, change: SetChange) => Effect.Effect<Option.Option<SetRow>>
  /**
   * Moves the sets from one of `from` to `to` in one statement and answers the ones it moved: two requests
   * racing for the same sets cannot both claim them.
   */
  /**
   * Runs `effect` in a transaction holding the dataset's row lock, so numbering new sets (keys, variant
   * indexes) and inserting them cannot interleave with another request doing the same.
   */
  readonly exclusive: <A, E, R>(datasetId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly claimStatus: (
    ids: ReadonlyArray<string>,
    from: ReadonlyArray<SetStatus>,
    to: SetStatus
  ) => Effect.Effect<ReadonlyArray<SetRow>>
}>()("engram/datasets/DatasetStore") {
  static readonly layer = Layer.effect(
    DatasetStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const datasets = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeDatasets), Effect.orDie)
      const sets = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeSets), Effect.orDie)

      /** Datasets with their counts: all sets, seeds, and sets per status. */
      const selectDatasets = (where: ReturnType<typeof sql.and>) =>
        datasets(sql`
          SELECT d.*,
            coalesce(c.set_count, 0)::int AS set_count,
            coalesce(c.seed_count, 0)::int AS seed_count,
            c.status_counts
          FROM taste_datasets d
          LEFT JOIN LATERAL (
            SELECT sum(n)::int AS set_count, sum(seeds)::int AS seed_count, jsonb_object_agg(status, n) AS status_counts
            FROM (SELECT status, count(*)::int AS n, count(*) FILTER (WHERE variant_index = 0)::int AS seeds
                  FROM taste_sets s WHERE s.dataset_id = d.id GROUP BY status) g
          ) c ON true
          WHERE ${where}
          ORDER BY d.created_at, d.id`)

      /**
       * One statement per 500 sets. The rows are answered from what was written (with the time used as created_at)
       * rather than read back: decoding thousands of rows again would cost more than the insert. A 10,000-row import in
       * one statement serialised 3 MB of parameter in one piece (~30 ms of the event loop); in pieces, other requests
       * get a turn between them. Callers run it in a transaction: all pieces or none.
       */
      const insertSets = Effect.fn("DatasetStore.insertSets")(function*(
        bankId: string,
        datasetId: string,
        rows: ReadonlyArray<NewSet>
      ) {
        if (rows.length === 0) return []
        const at = new Date(yield* Clock.currentTimeMillis)
        const record = (row: NewSet) => ({
          id: row.id,
          set_key: row.setKey,
          variant_index: row.variantIndex,
          parent_set_id: row.parentSetId,
          source_payload: row.sourcePayload,
          // An imported set starts with its working copy equal to its seed: sent once, half the parameter.
          working_payload: row.workingPayload === row.sourcePayload ? null : row.workingPayload,
          transform_log: row.transformLog,
          taste_tags: row.tasteTags
        })
        for (let from = 0; from < rows.length; from += setsPerInsert) {
          const records = rows.slice(from, from + setsPerInsert).map(record)
          yield* sql`
          INSERT INTO taste_sets (id, bank_id, dataset_id, set_key, variant_index, parent_set_id, source_payload,
            working_payload, transform_log, status, taste_tags, created_at, updated_at)
          SELECT x.id, ${bankId}, ${datasetId}, x.set_key, x.variant_index, x.parent_set_id, x.source_payload,
            coalesce(x.working_payload, x.source_payload), x.transform_log, 'draft', x.taste_tags, ${at}, ${at}
          FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS x(id text, set_key text, variant_index int,
            parent_set_id text, source_payload jsonb, working_payload jsonb, transform_log jsonb, taste_tags text[])`
            .pipe(Effect.orDie)
        }
        return rows.map((row): SetRow => ({
          id: row.id,
          bankId,
          datasetId,
          setKey: row.setKey,
          variantIndex: row.variantIndex,
          parentSetId: row.parentSetId,
          sourcePayload: row.sourcePayload,
          workingPayload: row.workingPayload,
          transformLog: row.transformLog,
          status: "draft",
          tasteTags: row.tasteTags,
          memoryUnitIds: [],
          createdAt: at,
          updatedAt: at
        }))
      })

      const updateSet = Effect.fn("DatasetStore.updateSet")(function*(setId: string, change: SetChange) {
        const found = yield* sets(sql`
          UPDATE taste_sets SET
            working_payload = coalesce(${
          change.workingPayload === undefined ? null : JSON.stringify(change.workingPayload)
        }::jsonb, working_payload),
            transform_log = transform_log || ${JSON.stringify(change.appendLog ?? [])}::jsonb,
            status = coalesce(${change.status ?? null}::text, status),
            taste_tags = coalesce(${change.tasteTags === undefined ? null : [...change.tasteTags]}::text[], taste_tags),
            memory_unit_ids = coalesce(${
          change.memoryUnitIds === undefined ? null : [...change.memoryUnitIds]
        }::text[], memory_unit_ids),
            updated_at = now()
          WHERE id = ${setId} RETURNING *`)
        return Option.fromNullishOr(found[0])
      })

      return DatasetStore.of({
        createDataset: (row) =>
          sql`INSERT INTO taste_datasets ${
            sql.insert({
              id: row.id,
              bankId: row.bankId,
              name: row.name,
              description: row.description,
              schemaType: row.schemaType,
              tasteTags: [...row.tasteTags]
            })
          }`.pipe(
            Effect.orDie,
            Effect.andThen(selectDatasets(sql.and([sql`d.id = ${row.id}`]))),
            Effect.map((found) => found[0]!)
          ),
        listDatasets: (bankId) => selectDatasets(sql.and([sql`d.bank_id = ${bankId}`])),
        findDataset: (bankId, id) =>
          selectDatasets(sql.and([sql`d.bank_id = ${bankId}`, sql`d.id = ${id}`])).pipe(
            Effect.map((found) => Option.fromNullishOr(found[0]))
          ),
        updateDataset: (bankId, id, fields) =>
          sql`UPDATE taste_datasets SET ${
            sql.update({
              name: fields.name,
              description: fields.description,
              tasteTags: [...fields.tasteTags],
              tasteProfile: JSON.stringify(fields.tasteProfile)
            })
          }, updated_at = now() WHERE bank_id = ${bankId} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
        deleteDataset: (bankId, id) =>
          sql<{ sets: number; found: number }>`
            WITH gone AS (DELETE FROM taste_datasets WHERE bank_id = ${bankId} AND id = ${id} RETURNING id)
            SELECT (SELECT count(*)::int FROM taste_sets WHERE dataset_id IN (SELECT id FROM gone)) AS sets,
              (SELECT count(*)::int FROM gone) AS found`.pipe(
            Effect.orDie,
            Effect.map((found) =>
              Number(found[0]?.found ?? 0) === 0 ? Option.none() : Option.some(Number(found[0]!.sets))
            )
          ),
        seedCount: (datasetId) =>
          sql<
            { n: number }
          >`SELECT count(*)::int AS n FROM taste_sets WHERE dataset_id = ${datasetId} AND variant_index = 0`.pipe(
            Effect.orDie,
            Effect.map((found) => Number(found[0]?.n ?? 0))
          ),
        insertSets,
        listSets: (datasetId, filter) => {
          const where = sql.and([
            sql`dataset_id = ${datasetId}`,
            ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`])
          ])
          return Effect.all([
            sets(sql`SELECT * FROM taste_sets WHERE ${where} ORDER BY set_key, variant_index
              LIMIT ${filter.limit} OFFSET ${filter.offset}`),
            sql<{ n: number }>`SELECT count(*)::int AS n FROM taste_sets WHERE ${where}`.pipe(Effect.orDie)
          ]).pipe(Effect.map(([found, counted]) => ({ sets: found, total: Number(counted[0]?.n ?? 0) })))
        },
        allSets: (datasetId) =>
          sets(sql`SELECT * FROM taste_sets WHERE dataset_id = ${datasetId} ORDER BY set_key, variant_index`),
        findSets: (bankId, ids) =>
          ids.length === 0
            ? Effect.succeed([])
            : sets(sql`SELECT * FROM taste_sets WHERE bank_id = ${bankId} AND id IN ${sql.in([...new Set(ids)])}`),
        maxVariantIndex: (datasetId, setKey) =>
          sql<{ n: number }>`SELECT coalesce(max(variant_index), 0)::int AS n FROM taste_sets
            WHERE dataset_id = ${datasetId} AND set_key = ${setKey}`.pipe(
            Effect.orDie,
            Effect.map((found) => Number(found[0]?.n ?? 0))
          ),
        updateSet,
        exclusive: (datasetId, effect) =>
          sql`SELECT id FROM taste_datasets WHERE id = ${datasetId} FOR UPDATE`.pipe(
            Effect.orDie,
            Effect.andThen(effect),
            sql.withTransaction,
            Effect.catchTag("SqlError", (error) => Effect.die(error))
          ),
        claimStatus: (ids, from, to) =>
          ids.length === 0 ? Effect.succeed([]) : sets(sql`
            UPDATE taste_sets SET status = ${to}, updated_at = now()
            WHERE id IN ${sql.in([...ids])} AND status IN ${sql.in([...from])} RETURNING *`)
      })
    })
  )
}

/**
 * The mental_models and mental_model_refreshes tables. Saving a refresh writes the new content and its history
 * row in one transaction, and the history row is keyed by the operation, so a refresh re-run after a crash finds
 * its own earlier result instead of refreshing twice.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { ListTagsMatch, MentalModelTrigger, RefreshMode, RefreshReason } from "../domain/MentalModel.ts"
import { RefreshMode as RefreshModeSchema, RefreshReason as RefreshReasonSchema } from "../domain/MentalModel.ts"

const ModelRow = Schema.Struct({
  bankId: Schema.String,
  id: Schema.String,
  name: Schema.String,
  sourceQuery: Schema.String,
  content: Schema.String,
  contentQuery: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  maxTokens: Schema.Number,
  triggerMode: RefreshModeSchema,
  refreshAfterConsolidation: Schema.Boolean,
  keepTrace: Schema.Boolean,
  responseSchema: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  reflectResponse: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  lastRefreshedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type MentalModelRecord = typeof ModelRow.Type

const RefreshRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  mentalModelId: Schema.String,
  operationId: Schema.NullOr(Schema.String),
  mode: RefreshModeSchema,
  requestedMode: RefreshModeSchema,
  fallbackReason: Schema.NullOr(Schema.String),
  reason: RefreshReasonSchema,
  changed: Schema.Boolean,
  sourceQuery: Schema.String,
  previousContent: Schema.NullOr(Schema.String),
  content: Schema.String,
  newFactIds: Schema.Array(Schema.String),
  changes: Schema.Array(Schema.String),
  createdAt: Schema.Date
})
export type RefreshRecord = typeof RefreshRow.Type

const decodeModels = Schema.decodeUnknownEffect(Schema.Array(ModelRow))

/** A jsonb value as a bind parameter; SQL NULL (not JSON null) when absent. */
const jsonOrNull = (value: unknown) => value === null || value === undefined ? null : JSON.stringify(value)
const decodeRefreshes = Schema.decodeUnknownEffect(Schema.Array(RefreshRow))

export interface NewMentalModel {
  readonly bankId: string
  readonly id: string
  readonly name: string
  readonly sourceQuery: string
  readonly tags: ReadonlyArray<string>
  readonly maxTokens: number
  readonly trigger: MentalModelTrigger
}

export interface MentalModelChanges {
  readonly name?: string | undefined
  readonly sourceQuery?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly maxTokens?: number | undefined
  readonly trigger?: MentalModelTrigger | undefined
}

export interface ListFilter {
  readonly tags: ReadonlyArray<string>
  readonly tagsMatch: ListTagsMatch
  readonly limit: number
  readonly offset: number
}

export interface RefreshOutcome {
  readonly operationId: string | null
  /**
   * When the generation started, in database time: stored as `last_refreshed_at`, so a memory written while the
   * content was being generated counts as new for the next delta instead of being missed.
   */
  readonly startedAt: Date
  readonly mode: RefreshMode
  readonly requestedMode: RefreshMode
  readonly fallbackReason: string | null
  readonly reason: RefreshReason
  readonly sourceQuery: string
  readonly previousContent: string | null
  readonly content: string
  readonly reflectResponse: Record<string, unknown> | null
  readonly newFactIds: ReadonlyArray<string>
  readonly changes: ReadonlyArray<string>
}

export class MentalModelStore extends Context.Service<MentalModelStore, {
  /** Inserts the model; `false` when the bank already has a model with this id. */
  readonly insert: (model: NewMentalModel) => Effect.Effect<boolean>
  readonly find: (bankId: string, id: string) => Effect.Effect<Option.Option<MentalModelRecord>>
  readonly exists: (bankId: string, id: string) => Effect.Effect<boolean>
  readonly list: (bankId: string, filter: ListFilter) => Effect.Effect<ReadonlyArray<MentalModelRecord>>
  readonly update: (
    bankId: string,
    id: string,
    changes: MentalModelChanges
  ) => Effect.Effect<Option.Option<MentalModelRecord>>
  readonly remove: (bankId: string, id: string) => Effect.Effect<boolean>
  /**
   * Empties the model's content (and the reflect payload and source query it came from), so the next refresh is a
   * full one; its definition and history stay. None when the model does not exist.
   */
  readonly clear: (bankId: string, id: string) => Effect.Effect<Option.Option<MentalModelRecord>>
  readonly history: (bankId: string, id: string) => Effect.Effect<ReadonlyArray<RefreshRecord>>
  /** The refresh an operation already saved, if it got that far before a crash. */
  readonly refreshOf: (operationId: string) => Effect.Effect<Option.Option<RefreshRecord>>
  /** Stores new content and its history row atomically; none when the model was deleted meanwhile. */
  readonly saveRefresh: (
    bankId: string,
    id: string,
    outcome: RefreshOutcome
  ) => Effect.Effect<Option.Option<RefreshRecord>>
  readonly refreshedAfterConsolidation: (bankId: string) => Effect.Effect<ReadonlyArray<MentalModelRecord>>
  /** The database's clock (millisecond precision, rounded down), which memory timestamps are compared with. */
  readonly databaseNow: Effect.Effect<Date>
}>()("engram/mentalmodels/MentalModelStore") {
  static readonly layer = Layer.effect(
    MentalModelStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const models = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeModels), Effect.orDie)
      const refreshes = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRefreshes), Effect.orDie)

      const insert = Effect.fn("MentalModelStore.insert")(function*(model: NewMentalModel) {
        const inserted = yield* sql`
          INSERT INTO mental_models ${
          sql.insert({
            bankId: model.bankId,
            id: model.id,
            name: model.name,
            sourceQuery: model.sourceQuery,
            tags: [...model.tags],
            maxTokens: model.maxTokens,
            triggerMode: model.trigger.mode,
            refreshAfterConsolidation: model.trigger.refresh_after_consolidation,
            keepTrace: model.trigger.keep_trace,
            responseSchema: jsonOrNull(model.trigger.response_schema)
          })
        }
          ON CONFLICT (bank_id, id) DO NOTHING RETURNING id`.pipe(Effect.orDie)
        return inserted.length > 0
      })

      const find = (bankId: string, id: string) =>
        models(sql`SELECT * FROM mental_models WHERE bank_id = ${bankId} AND id = ${id}`).pipe(
          Effect.map((found) => Option.fromNullishOr(found[0]))
        )

      const list = Effect.fn("MentalModelStore.list")(function*(bankId: string, filter: ListFilter) {
        const tags = [...filter.tags]
        const tagFilter = tags.length === 0 ? sql`TRUE` : {
          any: sql`tags && ${tags}::text[]`,
          all: sql`tags @> ${tags}::text[]`,
          exact: sql`(tags @> ${tags}::text[] AND tags <@ ${tags}::text[])`
        }[filter.tagsMatch]
        return yield* models(sql`
          SELECT * FROM mental_models WHERE bank_id = ${bankId} AND ${tagFilter}
          ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`)
      })

      const update = Effect.fn("MentalModelStore.update")(function*(
        bankId: string,
        id: string,
        changes: MentalModelChanges
      ) {
        const columns: Record<string, unknown> = {}
        if (changes.name !== undefined) columns["name"] = changes.name
        if (changes.sourceQuery !== undefined) columns["sourceQuery"] = changes.sourceQuery
        if (changes.tags !== undefined) columns["tags"] = [...changes.tags]
        if (changes.maxTokens !== undefined) columns["maxTokens"] = changes.maxTokens
        if (changes.trigger !== undefined) {
          columns["triggerMode"] = changes.trigger.mode
          columns["refreshAfterConsolidation"] = changes.trigger.refresh_after_consolidation
          columns["keepTrace"] = changes.trigger.keep_trace
          columns["responseSchema"] = jsonOrNull(changes.trigger.response_schema)
        }
        if (Object.keys(columns).length === 0) return yield* find(bankId, id)
        const updated = yield* models(sql`
          UPDATE mental_models SET ${sql.update(columns)}, updated_at = now()
          WHERE bank_id = ${bankId} AND id = ${id} RETURNING *`)
        return Option.fromNullishOr(updated[0])
      })

      const saveRefresh = Effect.fn("MentalModelStore.saveRefresh")(function*(
        bankId: string,
        id: string,
        outcome: RefreshOutcome
      ) {
        const saved = yield* Effect.gen(function*() {
          const updated = yield* sql`
            UPDATE mental_models SET content = ${outcome.content}, content_query = ${outcome.sourceQuery},
              reflect_response = ${
            outcome.reflectResponse === null ? null : JSON.stringify(outcome.reflectResponse)
          }::jsonb,
              last_refreshed_at = ${outcome.startedAt}, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${id} RETURNING id`
          // Deleted while the content was being generated: nothing to save.
          if (updated.length === 0) return []
          return yield* refreshes(sql`
            INSERT INTO mental_model_refreshes ${
            sql.insert({
              id: crypto.randomUUID(),
              bankId,
              mentalModelId: id,
              operationId: outcome.operationId,
              mode: outcome.mode,
              requestedMode: outcome.requestedMode,
              fallbackReason: outcome.fallbackReason,
              reason: outcome.reason,
              changed: outcome.previousContent !== outcome.content,
              sourceQuery: outcome.sourceQuery,
              previousContent: outcome.previousContent,
              content: outcome.content,
              newFactIds: [...outcome.newFactIds],
              changes: JSON.stringify(outcome.changes)
            })
          } RETURNING *`)
        }).pipe(sql.withTransaction, Effect.orDie)
        return Option.fromNullishOr(saved[0])
      })

      return MentalModelStore.of({
        insert,
        find,
        exists: (bankId, id) =>
          sql`SELECT 1 FROM mental_models WHERE bank_id = ${bankId} AND id = ${id}`.pipe(
            Effect.map((found) => found.length > 0),
            Effect.orDie
          ),
        list,
        update,
        clear: (bankId, id) =>
          models(sql`
            UPDATE mental_models SET content = '', content_query = NULL, reflect_response = NULL,
              last_refreshed_at = NULL, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${id} RETURNING *`).pipe(
            Effect.map((cleared) => Option.fromNullishOr(cleared[0]))
          ),
        remove: (bankId, id) =>
          sql`DELETE FROM mental_models WHERE bank_id = ${bankId} AND id = ${id} RETURNING id`.pipe(
            Effect.map((deleted) => deleted.length > 0),
            Effect.orDie
          ),
        history: (bankId, id) =>
          refreshes(sql`
            SELECT * FROM mental_model_refreshes WHERE bank_id = ${bankId} AND mental_model_id = ${id}
            ORDER BY created_at DESC, id`),
        refreshOf: (operationId) =>
          refreshes(sql`SELECT * FROM mental_model_refreshes WHERE operation_id = ${operationId}`).pipe(
            Effect.map((found) => Option.fromNullishOr(found[0]))
          ),
        saveRefresh,
        databaseNow: sql<{ now: Date }>`SELECT now() AS now`.pipe(
          Effect.map((rows) => new Date(rows[0]!.now)),
          Effect.orDie
        ),
        refreshedAfterConsolidation: (bankId) =>
          models(sql`SELECT * FROM mental_models WHERE bank_id = ${bankId} AND refresh_after_consolidation
            ORDER BY created_at, id`)
      })
    })
  )
}

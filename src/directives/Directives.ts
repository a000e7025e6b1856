/**
 * A bank's directives: hard rules injected into reflect prompts. CRUD for the REST and MCP surfaces, and
 * `applicable`, the ordered list reflect obeys (active only, priority high to low, tag-scoped). It never decides
 * how a rule is worded in a prompt: that belongs to the reflect prompt builder.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import type { DirectiveCreate, DirectiveResponse, DirectiveTagsMatch, DirectiveUpdate } from "../domain/Directive.ts"
import { NotFound } from "../domain/Errors.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"

const DirectiveRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  name: Schema.String,
  content: Schema.String,
  priority: Schema.Number,
  isActive: Schema.Boolean,
  tags: Schema.Array(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
type DirectiveRow = typeof DirectiveRow.Type
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(DirectiveRow))

export const toDirectiveResponse = (row: DirectiveRow): DirectiveResponse => ({
  id: row.id,
  bank_id: row.bankId,
  name: row.name,
  content: row.content,
  priority: row.priority,
  is_active: row.isActive,
  tags: row.tags,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt)
})

export interface DirectiveFilter {
  readonly tags?: ReadonlyArray<string> | undefined
  readonly tagsMatch?: DirectiveTagsMatch | undefined
  readonly activeOnly: boolean
  readonly limit: number
  readonly offset: number
}

/** The order rules are injected in: highest priority first, then oldest first so equal priorities are stable. */
const ordering = "priority DESC, created_at, id"

/**
 * Whether a directive applies to a reflect scoped to `scopeTags`: untagged directives always apply; a tagged
 * one only when the reflect reads at least one of its tags (so a rule for `team-a` never leaks into `team-b`).
 */
export const appliesTo = (directiveTags: ReadonlyArray<string>, scopeTags: ReadonlyArray<string>) =>
  directiveTags.length === 0 || directiveTags.some((tag) => scopeTags.includes(tag))

export class Directives extends Context.Service<Directives, {
  readonly list: (bankId: string, filter: DirectiveFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<DirectiveResponse>
    readonly total: number
  }, NotFound>
  readonly create: (bankId: string, input: DirectiveCreate) => Effect.Effect<DirectiveResponse>
  readonly get: (bankId: string, id: string) => Effect.Effect<DirectiveResponse, NotFound>
  readonly update: (bankId: string, id: string, input: DirectiveUpdate) => Effect.Effect<DirectiveResponse, NotFound>
  readonly remove: (bankId: string, id: string) => Effect.Effect<DirectiveResponse, NotFound>
  /** The active directives that apply to a reflect reading `scopeTags`, in injection order. */
  readonly applicable: (
    bankId: string,
    scopeTags: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<DirectiveResponse>>
}>()("engram/directives/Directives") {
  static readonly layer = Layer.effect(
    Directives,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const rows = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.orDie)

      const find = (bankId: string, id: string) =>
        rows(sql`SELECT * FROM directives WHERE bank_id = ${bankId} AND id = ${id}`).pipe(
          Effect.flatMap((found) =>
            found[0] === undefined ? Effect.fail(NotFound.of("directive", id)) : Effect.succeed(found[0])
          )
        )

      const tagFilter = (tags: ReadonlyArray<string> | undefined, match: DirectiveTagsMatch) => {
        if (tags === undefined || tags.length === 0) return sql`TRUE`
        const list = [...new Set(tags)]
        switch (match) {
          case "any":
            return sql`tags && ${list}::text[]`
          case "all":
            return sql`tags @> ${list}::text[]`
          case "exact":
            return sql`(tags @> ${list}::text[] AND tags <@ ${list}::text[])`
        }
      }

      const list = Effect.fn("Directives.list")(function*(bankId: string, filter: DirectiveFilter) {
        yield* banks.get(bankId)
        const where = sql.and([
          sql`bank_id = ${bankId}`,
          filter.activeOnly ? sql`is_active` : sql`TRUE`,
          tagFilter(filter.tags, filter.tagsMatch ?? "any")
        ])
        const [items, counted] = yield* Effect.all([
          rows(sql`SELECT * FROM directives WHERE ${where}
            ORDER BY ${sql.literal(ordering)} LIMIT ${filter.limit} OFFSET ${filter.offset}`),
          sql<{ total: number }>`SELECT count(*)::int AS total FROM directives WHERE ${where}`.pipe(Effect.orDie)
        ])
        return { items: items.map(toDirectiveResponse), total: counted[0]?.total ?? 0 }
      })

      const create = Effect.fn("Directives.create")(function*(bankId: string, input: DirectiveCreate) {
        yield* banks.ensure(bankId)
        const inserted = yield* rows(sql`INSERT INTO directives ${
          sql.insert({
            id: crypto.randomUUID(),
            bankId,
            name: input.name.trim(),
            content: input.content.trim(),
            priority: input.priority ?? 0,
            isActive: input.is_active ?? true,
            tags: [...new Set(input.tags ?? [])]
          })
        } RETURNING *`)
        return toDirectiveResponse(inserted[0]!)
      })

      const get = Effect.fn("Directives.get")(function*(bankId: string, id: string) {
        yield* banks.get(bankId)
        return toDirectiveResponse(yield* find(bankId, id))
      })

      const update = Effect.fn("Directives.update")(function*(bankId: string, id: string, input: DirectiveUpdate) {
        yield* banks.get(bankId)
        const current = yield* find(bankId, id)
        const now = new Date(yield* Clock.currentTimeMillis)
        const updated = yield* rows(sql`UPDATE directives SET ${
          sql.update({
            name: input.name?.trim() ?? current.name,
            content: input.content?.trim() ?? current.content,
            priority: input.priority ?? current.priority,
            isActive: input.is_active ?? current.isActive,
            tags: input.tags === undefined || input.tags === null ? current.tags : [...new Set(input.tags)],
            updatedAt: now
          })
        } WHERE bank_id = ${bankId} AND id = ${id} RETURNING *`)
        return yield* Option.match(Option.fromNullishOr(updated[0]), {
          onNone: () => Effect.fail(NotFound.of("directive", id)),
          onSome: (row) => Effect.succeed(toDirectiveResponse(row))
        })
      })

      const remove = Effect.fn("Directives.remove")(function*(bankId: string, id: string) {
        yield* banks.get(bankId)
        const deleted = yield* rows(sql`DELETE FROM directives WHERE bank_id = ${bankId} AND id = ${id} RETURNING *`)
        if (deleted[0] === undefined) return yield* NotFound.of("directive", id)
        return toDirectiveResponse(deleted[0])
      })

      const applicable = Effect.fn("Directives.applicable")(
        function*(bankId: string, scopeTags: ReadonlyArray<string>) {
          const active = yield* rows(sql`SELECT * FROM directives WHERE bank_id = ${bankId} AND is_active
          ORDER BY ${sql.literal(ordering)}`)
          return active.filter((row) => appliesTo(row.tags, scopeTags)).map(toDirectiveResponse)
        }
      )

      return Directives.of({ list, create, get, update, remove, applicable })
    })
  )
}

/**
 * Directives as clients see them: hard rules a bank injects into reflect prompts, ordered by priority (higher
 * first), switchable with `is_active`, and scoped by tags. Create/update bodies, the response and the list.
 */
import { Schema } from "effect"

const NonBlank = (field: string) =>
  Schema.String.check(Schema.makeFilter((value: string) => value.trim() !== "" || `${field} must not be empty`))

const Tags = Schema.Array(Schema.String)

/** Stored in an `integer` column: a larger value must be a 400, not a database error. */
const Priority = Schema.Int.check(Schema.isInt32())

export const DirectiveCreate = Schema.Struct({
  name: NonBlank("name"),
  content: NonBlank("content"),
  priority: Schema.optionalKey(Priority.annotate({ description: "higher is injected first (default 0)" })),
  is_active: Schema.optionalKey(Schema.Boolean.annotate({ description: "default true" })),
  tags: Schema.optionalKey(
    Schema.NullOr(Tags).annotate({
      description:
        "an untagged directive applies to every reflect; a tagged one only when the reflect is scoped to one of its tags"
    })
  )
}).annotate({ identifier: "DirectiveCreate" })
export type DirectiveCreate = typeof DirectiveCreate.Type

/** Every field optional; an absent (or null) field is left unchanged. */
export const DirectiveUpdate = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(NonBlank("name"))),
  content: Schema.optionalKey(Schema.NullOr(NonBlank("content"))),
  priority: Schema.optionalKey(Schema.NullOr(Priority)),
  is_active: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  tags: Schema.optionalKey(Schema.NullOr(Tags))
}).annotate({ identifier: "DirectiveUpdate" })
export type DirectiveUpdate = typeof DirectiveUpdate.Type

export const DirectiveResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  name: Schema.String,
  content: Schema.String,
  priority: Schema.Int,
  is_active: Schema.Boolean,
  tags: Tags,
  created_at: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DirectiveResponse" })
export type DirectiveResponse = typeof DirectiveResponse.Type

export const DirectiveListResponse = Schema.Struct({
  items: Schema.Array(DirectiveResponse),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "DirectiveListResponse" })

/** `any`: shares a tag; `all`: has every given tag; `exact`: has exactly the given tags. */
export const DirectiveTagsMatch = Schema.Literals(["any", "all", "exact"])
export type DirectiveTagsMatch = typeof DirectiveTagsMatch.Type

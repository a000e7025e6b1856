/**
 * Reflect as clients call it: ReflectRequest (query, budget, answer length, includes, JSON Schema for structured
 * output, tag scope, deprecated context) and ReflectResponse (text, based_on, structured_output, usage, trace), with
 * the spec's field names. Validation here is shape only; whether a response_schema can be enforced is checked by
 * the reflect service, which names the field when it cannot.
 */
import { Schema } from "effect"
import { TokenUsage } from "./Memory.ts"
import { Budget, TagGroup, TagsMatch } from "./Recall.ts"

const NonEmptyQuery = Schema.String.check(
  Schema.makeFilter((value: string) => value.trim() !== "" || "query must not be empty")
)

export const ReflectInclude = Schema.Struct({
  facts: Schema.optionalKey(
    Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: "set to an object (e.g. {}) to receive based_on"
    })
  ),
  tool_calls: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({
      output: Schema.optionalKey(Schema.Boolean.annotate({ description: "include each tool's output (default true)" }))
    })).annotate({ description: "set to an object to receive trace" })
  )
}).annotate({ identifier: "ReflectInclude" })
export type ReflectInclude = typeof ReflectInclude.Type

/** A JSON Schema is a JSON object; anything else (a string, a list) is rejected at the door. */
export const ResponseSchema = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "ResponseSchema",
  description: "JSON Schema (draft 2020-12 subset) the structured_output must match"
})

export const ReflectRequest = Schema.Struct({
  query: NonEmptyQuery,
  branch_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  budget: Schema.optionalKey(
    Budget.annotate({ description: "how much the agent may search: low (default), mid, high" })
  ),
  max_tokens: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 16, maximum: 65536 })).annotate({
      description: "maximum tokens of the answer (default 4096)"
    })
  ),
  include: Schema.optionalKey(Schema.NullOr(ReflectInclude)),
  response_schema: Schema.optionalKey(
    Schema.NullOr(ResponseSchema).annotate({ expected: "a JSON Schema object or null" })
  ),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  tags_match: Schema.optionalKey(TagsMatch),
  tag_groups: Schema.optionalKey(Schema.NullOr(Schema.Array(TagGroup))),
  context: Schema.optionalKey(
    Schema.NullOr(Schema.String.annotate({ description: "Deprecated: appended to the query" }))
  )
}).annotate({ identifier: "ReflectRequest" })
export type ReflectRequest = typeof ReflectRequest.Type

const Nullable = Schema.NullOr(Schema.String)

export const BasedOnMemory = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  type: Nullable,
  context: Nullable,
  occurred_start: Nullable,
  occurred_end: Nullable
}).annotate({ identifier: "ReflectBasedOnMemory" })
export type BasedOnMemory = typeof BasedOnMemory.Type

export const BasedOnMentalModel = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  context: Nullable
}).annotate({ identifier: "ReflectBasedOnMentalModel" })
export type BasedOnMentalModel = typeof BasedOnMentalModel.Type

export const BasedOnDirective = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  content: Schema.String
}).annotate({ identifier: "ReflectBasedOnDirective" })

export const BasedOn = Schema.Struct({
  memories: Schema.Array(BasedOnMemory),
  mental_models: Schema.Array(BasedOnMentalModel),
  directives: Schema.Array(BasedOnDirective)
}).annotate({ identifier: "ReflectBasedOn" })
export type BasedOn = typeof BasedOn.Type

export const ReflectToolCall = Schema.Struct({
  tool: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown),
  output: Schema.NullOr(Schema.Unknown),
  duration_ms: Schema.Number,
  iteration: Schema.Int
}).annotate({ identifier: "ReflectToolCall" })
export type ReflectToolCall = typeof ReflectToolCall.Type

export const ReflectLlmCall = Schema.Struct({
  scope: Schema.String,
  duration_ms: Schema.Number
}).annotate({ identifier: "ReflectLlmCall" })
export type ReflectLlmCall = typeof ReflectLlmCall.Type

export const ReflectTrace = Schema.Struct({
  tool_calls: Schema.Array(ReflectToolCall),
  llm_calls: Schema.Array(ReflectLlmCall)
}).annotate({ identifier: "ReflectTrace" })
export type ReflectTrace = typeof ReflectTrace.Type

export const ReflectResponse = Schema.Struct({
  text: Schema.String.annotate({ description: "the answer, in markdown" }),
  based_on: Schema.NullOr(BasedOn),
  structured_output: Schema.NullOr(Schema.Unknown),
  usage: TokenUsage,
  trace: Schema.NullOr(ReflectTrace)
}).annotate({ identifier: "ReflectResponse" })
export type ReflectResponse = typeof ReflectResponse.Type

/**
 * Internet research as clients call it: a question answered from the public web only, with the sources it read.
 * It never reads or writes the bank's memories (`writes_to_bank` is always false). The errors say what to
 * configure or which upstream failed, never a key.
 */
import { Schema } from "effect"
import { TokenUsage } from "./Memory.ts"
import { Budget } from "./Recall.ts"
import { ReflectTrace } from "./Reflect.ts"

export const ResearchRequest = Schema.Struct({
  query: Schema.String.check(Schema.makeFilter((value: string) => value.trim() !== "" || "query must not be empty")),
  budget: Schema.optionalKey(Budget.annotate({ description: "how much of the web to read: low, mid (default), high" })),
  max_tokens: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 16, maximum: 65536 })).annotate({
      description: "maximum tokens of the answer (default 4096)"
    })
  ),
  include: Schema.optionalKey(Schema.NullOr(
    Schema.Struct({
      tool_calls: Schema.optionalKey(
        Schema.NullOr(Schema.Struct({
          output: Schema.optionalKey(
            Schema.Boolean.annotate({ description: "include each step's output (default true)" })
          )
        })).annotate({ description: "set to an object to receive trace" })
      )
    }).annotate({ description: "only tool_calls applies to research" })
  ))
}).annotate({ identifier: "ResearchRequest" })
export type ResearchRequest = typeof ResearchRequest.Type

export const ResearchResponse = Schema.Struct({
  text: Schema.String.annotate({ description: "the answer in markdown; [n] cites source_urls[n-1]" }),
  source_urls: Schema.Array(Schema.String),
  writes_to_bank: Schema.Literal(false),
  usage: TokenUsage,
  trace: Schema.NullOr(ReflectTrace)
}).annotate({ identifier: "ResearchResponse" })
export type ResearchResponse = typeof ResearchResponse.Type

/** Research needs a web search provider and none is configured: the request cannot be served as asked. */
export class ResearchNotConfigured extends Schema.TaggedError<ResearchNotConfigured>()("ResearchNotConfigured", {
  detail: Schema.String,
  /** The environment variable to set. */
  setting: Schema.String
}, { httpApiStatus: 400 }) {}

/** The web search provider could not be reached or refused the request. */
export class ResearchUpstreamError extends Schema.TaggedError<ResearchUpstreamError>()("ResearchUpstreamError", {
  detail: Schema.String
}, { httpApiStatus: 502 }) {}

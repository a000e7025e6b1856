/**
 * The deprecated background route of Hindsight clients: text appended to the bank's mission (the field that
 * replaced "background"), answered with the mission, its `background` alias and the disposition.
 */
import { Schema } from "effect"
import { DispositionTraits } from "./Bank.ts"

export const AddBackgroundRequest = Schema.Struct({
  content: Schema.String.check(
    Schema.makeFilter((value: string) => value.trim() !== "" || "must not be empty"),
    Schema.isMaxLength(20_000)
  ).annotate({ description: "background text appended to the bank's mission" }),
  update_disposition: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Deprecated and ignored: the disposition is never inferred from the mission"
  }))
}).annotate({ identifier: "AddBackgroundRequest" })
export type AddBackgroundRequest = typeof AddBackgroundRequest.Type

export const BackgroundResponse = Schema.Struct({
  mission: Schema.String,
  background: Schema.NullOr(Schema.String).annotate({ description: "Deprecated: same as mission" }),
  disposition: Schema.NullOr(DispositionTraits)
}).annotate({ identifier: "BackgroundResponse" })

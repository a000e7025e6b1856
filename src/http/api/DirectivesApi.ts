/** Directive routes: list (filtered by tags and activity), create, read, update and delete. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import {
  DirectiveCreate,
  DirectiveListResponse,
  DirectiveResponse,
  DirectiveTagsMatch,
  DirectiveUpdate
} from "../../domain/Directive.ts"
import { NotFound } from "../../domain/Errors.ts"
import { Limit, Offset } from "./MemoriesApi.ts"

const bank = { bank_id: BankId }
const directive = { bank_id: BankId, directive_id: Schema.String }

export class DirectivesApi extends HttpApiGroup.make("directives")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/directives", {
      params: bank,
      query: {
        tags: Schema.optionalKey(
          Schema.Union([Schema.String, Schema.Array(Schema.String)]).annotate({
            description: "repeat the parameter for several tags"
          })
        ),
        tags_match: Schema.optionalKey(DirectiveTagsMatch),
        active_only: Schema.optionalKey(Schema.Boolean.annotate({ description: "default true" })),
        limit: Schema.optionalKey(Limit),
        offset: Schema.optionalKey(Offset)
      },
      success: DirectiveListResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "The bank's directives, highest priority first."),
    HttpApiEndpoint.post("create", "/v1/default/banks/:bank_id/directives", {
      params: bank,
      payload: DirectiveCreate,
      success: DirectiveResponse
    }).annotate(OpenApi.Description, "Add a hard rule that reflect obeys (creates the bank if needed)."),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/directives/:directive_id", {
      params: directive,
      success: DirectiveResponse,
      error: NotFound
    }),
    HttpApiEndpoint.patch("update", "/v1/default/banks/:bank_id/directives/:directive_id", {
      params: directive,
      payload: DirectiveUpdate,
      success: DirectiveResponse,
      error: NotFound
    }),
    HttpApiEndpoint.delete("delete", "/v1/default/banks/:bank_id/directives/:directive_id", {
      params: directive,
      success: DirectiveResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Delete a directive; answers with the directive as it was.")
  )
  .annotateMerge(OpenApi.annotations({ title: "Directives", description: "Hard rules injected into reflect" }))
{}

/**
 * MCP tools for what shapes reflect: mental models (saved reflect answers regenerated in the background) and
 * directives (hard rules). They call `MentalModels` and `Directives`, as the REST handlers do.
 */
import { Effect, Schema } from "effect"
import { DirectiveCreate } from "../../domain/Directive.ts"
import {
  CreateMentalModelRequest,
  defaultMentalModelMaxTokens,
  MentalModelTrigger,
  UpdateMentalModelRequest
} from "../../domain/MentalModel.ts"
import { Directives } from "../../directives/Directives.ts"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

/** Enough for every model and directive of a bank: the tools take no paging arguments. */
const listLimit = 1000

const modelId = { mental_model_id: described(Schema.String, "The mental model's id (see list_mental_models).") }
const refreshAfterConsolidation = "Regenerate automatically whenever consolidation creates or updates observations."
const modelTags = "Tags the model reads: its content is generated only from memories carrying them."

export const mentalModelTools = Effect.gen(function*() {
  const models = yield* MentalModels
  const directives = yield* Directives

  return [
    defineTool({
      name: "create_mental_model",
      title: "Create a mental model",
      description: "Create a mental model: a living document answering `source_query` from the bank's memories (e.g. " +
        "'What are the user's coding preferences?'). Its content is generated in the background; the result has the " +
        "`operation_id` to follow with get_operation, then read it with get_mental_model. Reflect consults mental " +
        "models first.",
      fields: {
        name: described(CreateMentalModelRequest.fields.name, "A human-readable name."),
        source_query: described(CreateMentalModelRequest.fields.source_query, "The question the model answers."),
        mental_model_id: described(
          CreateMentalModelRequest.fields.id,
          "Id to give the model (lowercase letters, digits, hyphens); default derived from the name."
        ),
        tags: described(CreateMentalModelRequest.fields.tags, modelTags),
        max_tokens: withDefault(
          CreateMentalModelRequest.fields.max_tokens,
          defaultMentalModelMaxTokens,
          "Maximum length of the content in tokens (256-8192)."
        ),
        trigger_refresh_after_consolidation: withDefault(
          MentalModelTrigger.fields.refresh_after_consolidation,
          false,
          refreshAfterConsolidation
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { mental_model_id, trigger_refresh_after_consolidation, ...fields }) =>
        Effect.map(
          models.create(bankId, {
            ...fields,
            ...(mental_model_id === undefined ? {} : { id: mental_model_id }),
            trigger: { refresh_after_consolidation: trigger_refresh_after_consolidation }
          }),
          (created) => ({
            mental_model_id: created.mentalModelId,
            operation_id: created.operationId,
            status: "pending"
          })
        )
    }),
    defineTool({
      name: "list_mental_models",
      title: "List mental models",
      description: "List the bank's mental models with their content, optionally only those sharing a tag.",
      fields: { tags: optional(Schema.Array(Schema.String), "Only models carrying one of these tags.") },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { tags }) =>
        Effect.map(
          models.list(bankId, { tags: tags ?? [], tagsMatch: "any", limit: listLimit, offset: 0 }),
          (items) => ({ items })
        )
    }),
    defineTool({
      name: "get_mental_model",
      title: "Read a mental model",
      description: "Read one mental model: its current content (markdown), source query, tags and last refresh time.",
      fields: modelId,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { mental_model_id }) => models.get(bankId, mental_model_id)
    }),
    defineTool({
      name: "update_mental_model",
      title: "Update a mental model",
      description: "Change a mental model's name, source query, tags, length or refresh trigger; only the given " +
        "fields change. Call refresh_mental_model to regenerate its content after changing the source query.",
      fields: {
        ...modelId,
        name: described(UpdateMentalModelRequest.fields.name, "New name."),
        source_query: described(UpdateMentalModelRequest.fields.source_query, "New question the model answers."),
        tags: described(UpdateMentalModelRequest.fields.tags, modelTags),
        max_tokens: described(UpdateMentalModelRequest.fields.max_tokens, "New maximum length in tokens (256-8192)."),
        trigger_refresh_after_consolidation: optional(Schema.Boolean, refreshAfterConsolidation)
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { mental_model_id, trigger_refresh_after_consolidation, ...fields }) =>
        models.update(bankId, mental_model_id, {
          ...fields,
          ...(trigger_refresh_after_consolidation === undefined
            ? {}
            : { trigger: { refresh_after_consolidation: trigger_refresh_after_consolidation } })
        })
    }),
    defineTool({
      name: "delete_mental_model",
      title: "Delete a mental model",
      description: "Delete a mental model and its refresh history.",
      fields: modelId,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { mental_model_id }) =>
        Effect.as(models.remove(bankId, mental_model_id), {
          success: true,
          message: `mental model '${mental_model_id}' deleted`
        })
    }),
    defineTool({
      name: "refresh_mental_model",
      title: "Refresh a mental model",
      description: "Regenerate a mental model's content from the bank's current memories, in the background; the " +
        "result has the `operation_id` to follow with get_operation.",
      fields: modelId,
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { mental_model_id }) =>
        Effect.map(models.refresh(bankId, mental_model_id), (queued) => ({
          mental_model_id,
          operation_id: queued.operationId,
          status: "pending"
        }))
    }),
    defineTool({
      name: "list_directives",
      title: "List directives",
      description: "List the bank's directives (rules reflect always obeys), highest priority first.",
      fields: {
        tags: optional(Schema.Array(Schema.String), "Only directives carrying one of these tags."),
        active_only: withDefault(Schema.Boolean, true, "Only active directives; false lists inactive ones too.")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { tags, active_only }) =>
        Effect.map(
          directives.list(bankId, { tags, tagsMatch: "any", activeOnly: active_only, limit: listLimit, offset: 0 }),
          (page) => ({ items: page.items, total: page.total })
        )
    }),
    defineTool({
      name: "create_directive",
      title: "Create a directive",
      description: "Add a hard rule the bank obeys whenever it reflects (e.g. 'Always answer in British English', " +
        "'Never reveal the user's address'). Higher priority rules come first; a tagged rule applies only to " +
        "reflects scoped to one of its tags.",
      fields: {
        name: described(DirectiveCreate.fields.name, "A short name for the rule."),
        content: described(DirectiveCreate.fields.content, "The rule itself, as an instruction."),
        priority: described(DirectiveCreate.fields.priority, "Higher is applied first (default 0)."),
        is_active: withDefault(DirectiveCreate.fields.is_active, true, "Whether the rule applies now."),
        tags: described(DirectiveCreate.fields.tags, "Tags that scope the rule; untagged rules apply to every reflect.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, args) => directives.create(bankId, args)
    }),
    defineTool({
      name: "delete_directive",
      title: "Delete a directive",
      description: "Delete a directive by id (see list_directives); returns the deleted directive.",
      fields: { directive_id: described(Schema.String, "The directive's id.") },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { directive_id }) => directives.remove(bankId, directive_id)
    })
  ]
})

/**
 * The `forgetting` family of MCP tools: forget an entity, memory ids, a document or a tag with everything derived from
 * it (or, with `dry_run`, see what would go), through the `Forget` service exactly as `POST {bank}/forget` does.
 */
import { Effect, Schema } from "effect"
import { ForgetRequest } from "../../domain/Forget.ts"
import { Forget } from "../../memory/forgetting/Forget.ts"
import { defineTool, described } from "../McpTool.ts"

export const forgetTools = Effect.gen(function*() {
  const forgetting = yield* Forget
  return [
    defineTool({
      name: "forget",
      title: "Forget memories and everything derived from them",
      description: "Forget every memory naming an entity (or with these ids, from this document or with this tag) " +
        "and everything built from it: observations, the entity and its trajectory, mental models (emptied and " +
        "refreshed), dream evidence, anomalies. Irreversible: call with dry_run true first to see the report of " +
        "what would go. Memory repo commits that may hold the content are listed, never rewritten.",
      fields: {
        entity: described(ForgetRequest.fields.entity, "An entity's name (or alias)."),
        memory_ids: described(ForgetRequest.fields.memory_ids, "Memory ids."),
        document_id: described(ForgetRequest.fields.document_id, "A document id: its memories and the document."),
        tag: described(ForgetRequest.fields.tag, "Every memory carrying this tag."),
        dry_run: described(Schema.optionalKey(Schema.Boolean), "true: report what would go and change nothing.")
      },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: (bankId, request) => forgetting.forget(bankId, request)
    })
  ]
})

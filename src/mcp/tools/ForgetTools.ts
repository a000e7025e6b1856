/**
 * The `forgetting` family of MCP tools: forget an entity, memory ids, a document or a tag with everything derived from
 * it (or, with `dry_run`, see what would go), through the `Forget` service exactly as `POST {bank}/forget` does; and
 * read or change the bank's retention policy, as the `retention` object of `PATCH {bank}/config` does.
 */
import { Effect, Schema } from "effect"
import { Banks } from "../../bank/Banks.ts"
import { ForgetRequest } from "../../domain/Forget.ts"
import { effectiveRetention, RetentionSettingsUpdate } from "../../domain/Retention.ts"
import { Forget } from "../../memory/forgetting/Forget.ts"
import { defineTool, described } from "../McpTool.ts"

export const forgetTools = Effect.gen(function*() {
  const forgetting = yield* Forget
  const banks = yield* Banks
  const retentionView = (bankId: string, settings: Parameters<typeof effectiveRetention>[0]) => ({
    bank_id: bankId,
    retention: effectiveRetention(settings)
  })
  return [
    defineTool({
      name: "forget",
      title: "Forget memories and everything derived from them",
      description: "Forget every memory naming an entity (or with these ids, from this document or with this tag) " +
        "and everything built from it: observations, the entity and its trajectory, mental models (emptied and " +
        "refreshed), dream evidence, anomalies. Irreversible: call with dry_run true first to see the report of " +
        "what would go. Memory repo commits that may hold the content are listed; purge_history true rewrites them " +
        "without it (the one operation that rewrites repo history: commit ids change, the report maps old to new).",
      fields: {
        entity: described(ForgetRequest.fields.entity, "An entity's name (or alias)."),
        memory_ids: described(ForgetRequest.fields.memory_ids, "Memory ids."),
        document_id: described(ForgetRequest.fields.document_id, "A document id: its memories and the document."),
        tag: described(ForgetRequest.fields.tag, "Every memory carrying this tag."),
        dry_run: described(Schema.optionalKey(Schema.Boolean), "true: report what would go and change nothing."),
        purge_history: described(
          Schema.optionalKey(Schema.Boolean),
          "true: also rewrite the memory repo commits that hold it."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: (bankId, request) => forgetting.forget(bankId, request)
    }),
    defineTool({
      name: "get_retention",
      title: "Read the bank's retention policy",
      description: "The bank's retention policy: the maximum age in days of each fact type, the maximum number of " +
        "facts (the least influential are evicted first) and the recency half-life recall applies; null means off.",
      fields: {},
      hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      run: (bankId) => Effect.map(banks.get(bankId), (bank) => retentionView(bankId, bank.retentionSettings))
    }),
    defineTool({
      name: "set_retention",
      title: "Change the bank's retention policy",
      description: "Change the bank's retention policy, key by key (absent or null: unchanged; 0: off). A maximum " +
        "age or count deletes, at once and for good, the memories past it with what was derived from them.",
      fields: {
        max_age_days: described(
          RetentionSettingsUpdate.fields.max_age_days,
          "Days each fact type (world, experience, observation, opinion) is kept after it was stored; 0 removes the limit."
        ),
        max_memories: described(
          RetentionSettingsUpdate.fields.max_memories,
          "Most facts the bank keeps; the least influential go first; 0 removes the limit."
        ),
        recency_half_life_days: described(
          RetentionSettingsUpdate.fields.recency_half_life_days,
          "Recall prefers recent memories: the recency half of a score halves every this many days; 0 switches it off."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: (bankId, update) =>
        banks.patch(bankId, { retention: update }).pipe(
          Effect.map((bank) => retentionView(bankId, bank.retentionSettings))
        )
    })
  ]
})

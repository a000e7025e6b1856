/**
 * Seeds a preset's playbook into a bank once: its directives (skipped when the bank has a directive of the same
 * name) and its pinned mental models (static content, never regenerated; skipped when the id exists). A failure
 * is logged and swallowed: seeding must never fail the bank create or update that asked for it.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { defaultMentalModelMaxTokens } from "../domain/MentalModel.ts"
import { findPreset } from "./BankPresets.ts"

/** Budget recorded on seeded models; their content is static, so it only bounds a later manual refresh. */
const seededMaxTokens = defaultMentalModelMaxTokens

export const seedBankPreset = (sql: SqlClient.SqlClient, bankId: string, presetName: string | null | undefined) => {
  const found = findPreset(presetName)
  if (found === undefined) return Effect.void
  const { preset } = found
  return Effect.gen(function*() {
    for (const directive of preset.directives) {
      yield* sql`
        INSERT INTO directives (id, bank_id, name, content, priority, is_active, tags)
        SELECT ${crypto.randomUUID()}, ${bankId}, ${directive.name}, ${directive.content}, ${directive.priority}, true,
          ${[...preset.tags]}::text[]
        WHERE NOT EXISTS (SELECT 1 FROM directives WHERE bank_id = ${bankId} AND name = ${directive.name})`
    }
    for (const model of preset.mentalModels) {
      yield* sql`
        INSERT INTO mental_models (bank_id, id, name, source_query, content, tags, max_tokens, trigger_mode,
          refresh_after_consolidation, last_refreshed_at)
        VALUES (${bankId}, ${model.id}, ${model.name}, ${model.sourceQuery}, ${model.content},
          ${[...preset.mentalModelTags]}::text[], ${seededMaxTokens}, 'full', false, now())
        ON CONFLICT (bank_id, id) DO NOTHING`
    }
  }).pipe(
    sql.withTransaction,
    Effect.catchCause((cause) => Effect.logWarning("bank preset seeding failed; the bank update stands", cause)),
    Effect.withSpan("BankPresets.seed", { attributes: { preset: found.name } })
  )
}

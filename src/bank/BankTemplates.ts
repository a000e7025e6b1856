/**
 * Bank templates: export a bank's configuration overrides, directives and mental models as a manifest, and import
 * one into a bank (created if needed). An import checks the whole manifest first and then writes everything in one
 * transaction — a bad field is a 400 that names it and changes nothing; a dry run checks and reports what it would
 * do without writing. Directives are matched by name, mental models by id; new models, and models whose query
 * changed, get a refresh operation that generates their content.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { BankSettings } from "../domain/Bank.ts"
import type { BankTemplateImportResponse, BankTemplateManifest, TemplateMentalModel } from "../domain/BankTemplate.ts"
import { BankTemplateManifest as ManifestSchema, templateVersion } from "../domain/BankTemplate.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { defaultMentalModelMaxTokens, defaultTrigger, type MentalModelTrigger } from "../domain/MentalModel.ts"
import { Directives } from "../directives/Directives.ts"
import { type RefreshPayload, refreshTaskType } from "../mentalmodels/MentalModels.ts"
import { type MentalModelRecord, MentalModelStore } from "../mentalmodels/MentalModelStore.ts"
import { OperationStore } from "./OperationStore.ts"
import { seedBankPreset } from "../presets/PresetSeeding.ts"
import { BankActors } from "./BankActors.ts"
import { BankSettingsChanges } from "./BankSettingsChanges.ts"
import { Banks } from "./Banks.ts"
import { applyBankUpdate, emptySettings } from "./BankSettings.ts"
import { BankStore } from "./BankStore.ts"
import { bankUpdateOf, manifestIssues, templateConfigOf } from "./TemplateRules.ts"

/** More than any bank holds; a template is the whole set, never a page of it. */
const everything = 1_000_000

const triggerOf = (model: TemplateMentalModel, base: MentalModelTrigger = defaultTrigger): MentalModelTrigger => ({
  mode: model.trigger?.mode ?? base.mode,
  refresh_after_consolidation: model.trigger?.refresh_after_consolidation ?? base.refresh_after_consolidation,
  keep_trace: model.trigger?.keep_trace ?? base.keep_trace,
  response_schema: model.trigger?.response_schema !== undefined ? model.trigger.response_schema : base.response_schema
})

/**
 * The JSON Schema of the manifest, for `GET /v1/bank-template-schema`: the manifest's own definition at the top (the
 * generator refers to it by `$ref`, which validators accept but readers of `properties` do not), its parts in `$defs`.
 */
export const manifestJsonSchema: Record<string, unknown> = (() => {
  const document = Schema.toJsonSchemaDocument(ManifestSchema)
  const ref = typeof document.schema["$ref"] === "string" ? document.schema["$ref"].replace("#/$defs/", "") : undefined
  const top = ref === undefined ? document.schema : document.definitions[ref] ?? document.schema
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "engram bank template manifest",
    ...top,
    $defs: document.definitions
  }
})()

export class BankTemplates extends Context.Service<BankTemplates, {
  readonly exportTemplate: (bankId: string) => Effect.Effect<BankTemplateManifest, NotFound>
  readonly importTemplate: (
    bankId: string,
    manifest: BankTemplateManifest,
    options: { readonly dryRun: boolean }
  ) => Effect.Effect<BankTemplateImportResponse, ValidationError>
}>()("engram/bank/BankTemplates") {
  static readonly layer = Layer.effect(
    BankTemplates,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const store = yield* BankStore
      const directives = yield* Directives
      const models = yield* MentalModelStore
      const operations = yield* OperationStore
      const actors = yield* BankActors
      const settingsChanges = yield* BankSettingsChanges

      const exportTemplate = Effect.fn("BankTemplates.export")(function*(bankId: string) {
        const bank = yield* banks.get(bankId)
        const [rules, mentalModels] = yield* Effect.all([
          directives.list(bankId, { activeOnly: false, limit: everything, offset: 0 }),
          models.list(bankId, { tags: [], tagsMatch: "any", limit: everything, offset: 0 })
        ])
        return {
          version: templateVersion,
          bank: templateConfigOf(bank, banks.defaults),
          mental_models: mentalModels.map((model) => ({
            id: model.id,
            name: model.name,
            source_query: model.sourceQuery,
            tags: model.tags,
            max_tokens: model.maxTokens,
            trigger: {
              mode: model.triggerMode,
              refresh_after_consolidation: model.refreshAfterConsolidation,
              keep_trace: model.keepTrace,
              response_schema: model.responseSchema
            }
          })),
          directives: rules.items.map((rule) => ({
            name: rule.name,
            content: rule.content,
            priority: rule.priority,
            is_active: rule.is_active,
            tags: rule.tags
          }))
        } satisfies BankTemplateManifest
      })

      /** What the import will do, read before any write: the same answer for a dry run and for the real one. */
      const plan = Effect.fnUntraced(function*(bankId: string, manifest: BankTemplateManifest) {
        const bank = yield* store.find(bankId)
        const exists = Option.isSome(bank)
        const rules = exists
          ? (yield* Effect.orDie(directives.list(bankId, { activeOnly: false, limit: everything, offset: 0 }))).items
          : []
        // Several directives may share a name; the template updates the oldest, as a re-import of its export would.
        const ruleByName = new Map<string, (typeof rules)[number]>()
        for (const rule of [...rules].sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""))) {
          if (!ruleByName.has(rule.name)) ruleByName.set(rule.name, rule)
        }
        const existingModels = new Map<string, MentalModelRecord>()
        for (const model of manifest.mental_models ?? []) {
          const found = exists ? yield* models.find(bankId, model.id) : Option.none()
          if (Option.isSome(found)) existingModels.set(model.id, found.value)
        }
        return { bank, ruleByName, existingModels }
      })

      const importTemplate = Effect.fn("BankTemplates.import")(function*(
        bankId: string,
        manifest: BankTemplateManifest,
        options: { readonly dryRun: boolean }
      ) {
        const issues = manifestIssues(manifest)
        if (issues.length > 0) {
          return yield* new ValidationError({
            detail: issues.map((issue) => `${issue.field}: ${issue.message}`).join("; "),
            errors: issues
          })
        }
        const { bank, existingModels, ruleByName } = yield* plan(bankId, manifest)
        const templateDirectives = (manifest.directives ?? []).map((rule) => ({ ...rule, name: rule.name.trim() }))
        const response = {
          bank_id: bankId,
          config_applied: manifest.bank !== undefined && manifest.bank !== null,
          mental_models_created: (manifest.mental_models ?? []).filter((m) => !existingModels.has(m.id)).map((m) =>
            m.id
          ),
          mental_models_updated: (manifest.mental_models ?? []).filter((m) => existingModels.has(m.id)).map((m) =>
            m.id
          ),
          directives_created: templateDirectives.filter((d) => !ruleByName.has(d.name)).map((d) => d.name),
          directives_updated: templateDirectives.filter((d) => ruleByName.has(d.name)).map((d) => d.name),
          operation_ids: [] as Array<string>,
          dry_run: options.dryRun
        }
        if (options.dryRun) return response

        const update = manifest.bank === undefined || manifest.bank === null ? undefined : bankUpdateOf(manifest.bank)
        const written = yield* Effect.gen(function*() {
          const before = Option.getOrUndefined(bank)
          let afterCommit: Effect.Effect<void> = Effect.void
          if (update !== undefined) {
            const next: BankSettings = applyBankUpdate(before ?? emptySettings, update)
            const saved = yield* store.save(bankId, next)
            afterCommit = yield* settingsChanges.saved({ bankId, before, after: saved })
            yield* seedBankPreset(sql, bankId, update.bank_preset)
          } else if (before === undefined) {
            yield* store.ensure(bankId)
          }

          for (const rule of templateDirectives) {
            const existing = ruleByName.get(rule.name)
            if (existing === undefined) yield* directives.create(bankId, rule)
            else yield* directives.update(bankId, existing.id, rule)
          }

          const operationIds: Array<string> = []
          const queueRefresh = (id: string, reason: RefreshPayload["reason"]) =>
            operations.create({
              bankId,
              taskType: refreshTaskType,
              payload: { mental_model_id: id, reason } satisfies RefreshPayload,
              itemsCount: 1
            }).pipe(Effect.map((operation) => operationIds.push(operation.id)))
          for (const model of manifest.mental_models ?? []) {
            const existing = existingModels.get(model.id)
            const fields = { name: model.name.trim(), sourceQuery: model.source_query.trim() }
            const tags = model.tags === undefined ? undefined : [...new Set(model.tags)]
            if (existing === undefined) {
              yield* models.insert({
                bankId,
                id: model.id,
                ...fields,
                tags: tags ?? [],
                maxTokens: model.max_tokens ?? defaultMentalModelMaxTokens,
                trigger: triggerOf(model)
              })
              yield* queueRefresh(model.id, "created")
            } else {
              yield* models.update(bankId, model.id, {
                ...fields,
                tags,
                maxTokens: model.max_tokens,
                trigger: triggerOf(model, {
                  mode: existing.triggerMode,
                  refresh_after_consolidation: existing.refreshAfterConsolidation,
                  keep_trace: existing.keepTrace,
                  response_schema: existing.responseSchema
                })
              })
              // New content only when the question changed; the same question keeps the content it has.
              if (fields.sourceQuery !== existing.sourceQuery) yield* queueRefresh(model.id, "manual")
            }
          }
          return { operationIds, afterCommit }
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.orDie)

        // Woken only after the commit, so the actor cannot look before the queued work is visible.
        if (written.operationIds.length > 0) yield* actors.wake(bankId)
        yield* written.afterCommit
        return { ...response, operation_ids: written.operationIds }
      })

      return BankTemplates.of({ exportTemplate, importTemplate })
    })
  )
}

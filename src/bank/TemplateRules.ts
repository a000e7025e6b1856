/**
 * Pure rules of bank templates: which settings a template carries (the bank's overrides, the same set the
 * configuration view shows, so a setting added there travels in templates without an edit here) and the checks an
 * import makes across items before anything is written. No I/O.
 */
import type { Bank, BankUpdate } from "../domain/Bank.ts"
import { BankUpdate as BankUpdateSchema } from "../domain/Bank.ts"
import type { BankTemplateManifest, TemplateBankConfig } from "../domain/BankTemplate.ts"
import { hindsightTemplateSettings } from "../domain/BankTemplate.ts"
import { FieldIssue } from "../domain/Errors.ts"
import type { ServerDefaults } from "./BankViews.ts"
import { toConfigView } from "./BankViews.ts"

const bankSettings: ReadonlySet<string> = new Set(Object.keys(BankUpdateSchema.fields))

/**
 * The bank's overrides as template fields. The disposition goes out as the three `disposition_*` fields, which
 * Hindsight's templates use too; settings left at the server default are not written, so importing the template
 * leaves them to the target server's defaults.
 */
export const templateConfigOf = (bank: Bank, defaults: ServerDefaults): Record<string, unknown> => {
  const { disposition, ...overrides } = toConfigView(bank, defaults).overrides as Record<string, unknown>
  const traits = disposition as Bank["disposition"] | undefined
  return {
    ...overrides,
    ...(traits === undefined ? {} : {
      disposition_skepticism: traits.skepticism,
      disposition_literalism: traits.literalism,
      disposition_empathy: traits.empathy
    })
  }
}

/** The part of a template's config that engram applies: its own settings (Hindsight-only ones are dropped). */
export const bankUpdateOf = (config: TemplateBankConfig): BankUpdate =>
  Object.fromEntries(Object.entries(config).filter(([key]) => bankSettings.has(key))) as BankUpdate

/**
 * What is wrong with a manifest beyond its schema: a setting neither engram nor Hindsight has (a misspelling would
 * otherwise be dropped silently), and a mental model id or a directive name given twice (the match keys of an
 * import; the second would silently overwrite the first).
 */
export const manifestIssues = (manifest: BankTemplateManifest): ReadonlyArray<FieldIssue> => {
  const issues: Array<FieldIssue> = []
  const issue = (field: string, message: string) => issues.push(new FieldIssue({ field, location: "body", message }))
  for (const key of Object.keys(manifest.bank ?? {})) {
    if (!bankSettings.has(key) && !hindsightTemplateSettings.has(key)) {
      issue(`bank.${key}`, "not a bank setting (GET /v1/bank-template-schema lists them)")
    }
  }
  const seen = (values: ReadonlyArray<string>, field: (index: number) => string, what: string) => {
    const first = new Map<string, number>()
    values.forEach((value, index) => {
      const earlier = first.get(value)
      if (earlier === undefined) first.set(value, index)
      else issue(field(index), `${what} '${value}' appears twice (also at index ${earlier})`)
    })
  }
  seen(
    (manifest.mental_models ?? []).map((model) => model.id),
    (index) => `mental_models.${index}.id`,
    "mental model id"
  )
  seen(
    (manifest.directives ?? []).map((directive) => directive.name.trim()),
    (index) => `directives.${index}.name`,
    "directive name"
  )
  return issues
}

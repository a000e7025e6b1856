/**
 * A bank's retention policy as clients send and receive it (the `retention` object of the bank config): a maximum age
 * per fact type, a maximum number of memories, and the recency half-life recall applies. Validated by schema, so a
 * negative, fractional or out-of-range value is a 400 naming the field; merged key by key like the other settings.
 * Pure: enforcement is `src/memory/forgetting/RetentionSweep.ts`, the decay `src/memory/recall/RecencyDecay.ts`.
 */
import { Schema } from "effect"

const opt = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
/** Zero switches a limit off; a hundred years is the most any limit may say. */
const days = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 36_500 }))

export const retentionFactTypes = ["world", "experience", "observation", "opinion"] as const
export type RetentionFactType = typeof retentionFactTypes[number]

export const MaxAgeDaysUpdate = Schema.Struct({
  world: opt(days),
  experience: opt(days),
  observation: opt(days),
  opinion: opt(days)
})

/** The `retention` object of a bank update: `null` and absent leave a value unchanged, `0` removes the limit. */
export const RetentionSettingsUpdate = Schema.Struct({
  max_age_days: opt(MaxAgeDaysUpdate.annotate({
    description: "days a memory of each fact type is kept after it was stored; 0 removes the limit"
  })),
  max_memories: opt(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000_000 })).annotate({
      description:
        "most facts (world, experience, opinion) the bank keeps; the least influential are evicted first; 0 removes the limit"
    })
  ),
  recency_half_life_days: opt(
    Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 36_500 })).annotate({
      description: "recall scores halve for every this many days of a memory's age; 0 (the default) switches decay off"
    })
  )
}).annotate({ identifier: "RetentionSettingsUpdate" })
export type RetentionSettingsUpdate = typeof RetentionSettingsUpdate.Type

/** What a bank stores in `banks.retention_settings`: only the limits that are on. */
export interface RetentionSettings {
  readonly max_age_days?: Partial<Record<RetentionFactType, number>>
  readonly max_memories?: number
  readonly recency_half_life_days?: number
}

const positive = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value > 0

/** A stored value read back: anything not a positive number is dropped (a hand-edited row cannot break a bank). */
export const decodeRetentionSettings = (stored: unknown): RetentionSettings => {
  if (typeof stored !== "object" || stored === null) return {}
  const record = stored as Record<string, unknown>
  const ages = typeof record["max_age_days"] === "object" && record["max_age_days"] !== null
    ? Object.fromEntries(retentionFactTypes.flatMap((type) => {
      const value = (record["max_age_days"] as Record<string, unknown>)[type]
      return positive(value) ? [[type, value]] : []
    }))
    : {}
  return {
    ...(Object.keys(ages).length > 0 ? { max_age_days: ages } : {}),
    ...(positive(record["max_memories"]) ? { max_memories: record["max_memories"] } : {}),
    ...(positive(record["recency_half_life_days"]) ? { recency_half_life_days: record["recency_half_life_days"] } : {})
  }
}

/** Merges an update into the stored settings key by key; `0` removes a limit, `null` and absent keep it. */
export const applyRetentionUpdate = (
  current: RetentionSettings,
  update: RetentionSettingsUpdate | null | undefined
): RetentionSettings => {
  if (update === null || update === undefined) return current
  const ages: Record<string, number> = { ...current.max_age_days }
  for (const type of retentionFactTypes) {
    const value = update.max_age_days?.[type]
    if (value === null || value === undefined) continue
    if (value === 0) delete ages[type]
    else ages[type] = value
  }
  const scalar = (next: number | null | undefined, kept: number | undefined) =>
    next === null || next === undefined ? kept : next === 0 ? undefined : next
  return decodeRetentionSettings({
    max_age_days: ages,
    max_memories: scalar(update.max_memories, current.max_memories),
    recency_half_life_days: scalar(update.recency_half_life_days, current.recency_half_life_days)
  })
}

/** The effective view: every limit named, `null` where it is off (the server default for each). */
export const effectiveRetention = (settings: RetentionSettings) => ({
  max_age_days: Object.fromEntries(retentionFactTypes.map((type) => [type, settings.max_age_days?.[type] ?? null])),
  max_memories: settings.max_memories ?? null,
  recency_half_life_days: settings.recency_half_life_days ?? null
})

export const hasRetentionLimits = (settings: RetentionSettings) =>
  settings.max_memories !== undefined || Object.keys(settings.max_age_days ?? {}).length > 0

/**
 * The bank settings of entity trajectories and entity intelligence: their request fields (validated by schema, so a
 * bad value is a 400 naming the field), how an update applies, how they are stored (one jsonb column of the
 * bank's overrides) and their effective values. Pure; the bank modules call into it.
 */
import { Schema } from "effect"

const nullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

/** The fields `PUT/PATCH {bank}` and `PATCH {bank}/config` accept, merged into `BankUpdate`. */
export const EntitySettingsUpdate = {
  enable_entity_trajectories: nullable(Schema.Boolean.annotate({
    description: "Recompute the trajectories of the entities a retain touches (default false)"
  })),
  entity_trajectory_max_facts: nullable(
    Schema.Int.check(Schema.isBetween({ minimum: 3, maximum: 2000 })).annotate({
      description: "Newest facts per entity a trajectory reads (default 200)"
    })
  ),
  entity_trajectory_min_facts: nullable(
    Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 2000 })).annotate({
      description: "Facts an entity needs before it gets a trajectory (default 3)"
    })
  ),
  entity_trajectory_forecast_horizon: nullable(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })).annotate({
      description: "Steps ahead the forecast looks (1-50, default 5)"
    })
  ),
  entity_trajectory_laplace_alpha: nullable(
    Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(100)).annotate({
      description: "Laplace smoothing of state transitions (> 0, default 0.1)"
    })
  ),
  enable_entity_intelligence: nullable(Schema.Boolean.annotate({
    description: "Recompute the bank's entity intelligence when its entity set grew enough (default false)"
  }))
}

type UpdateFields = { readonly [K in keyof typeof EntitySettingsUpdate]?: (typeof EntitySettingsUpdate)[K]["Type"] }

export interface EntitySettings {
  readonly enableEntityTrajectories: boolean
  readonly trajectoryMaxFacts: number
  readonly trajectoryMinFacts: number
  readonly forecastHorizon: number
  readonly laplaceAlpha: number
  readonly enableEntityIntelligence: boolean
}

/** What a bank sets itself; absent keys follow the defaults. Stored as is in `banks.entity_settings`. */
export type EntitySettingsOverrides = Partial<EntitySettings>

export const entitySettingsDefaults: EntitySettings = {
  enableEntityTrajectories: false,
  trajectoryMaxFacts: 200,
  trajectoryMinFacts: 3,
  forecastHorizon: 5,
  laplaceAlpha: 0.1,
  enableEntityIntelligence: false
}

const fieldOf: Record<keyof EntitySettings, keyof typeof EntitySettingsUpdate> = {
  enableEntityTrajectories: "enable_entity_trajectories",
  trajectoryMaxFacts: "entity_trajectory_max_facts",
  trajectoryMinFacts: "entity_trajectory_min_facts",
  forecastHorizon: "entity_trajectory_forecast_horizon",
  laplaceAlpha: "entity_trajectory_laplace_alpha",
  enableEntityIntelligence: "enable_entity_intelligence"
}
const keys = Object.keys(fieldOf) as Array<keyof EntitySettings>

/** `null` and absent leave a value unchanged, as for every other bank setting. */
export const applyEntitySettingsUpdate = (
  current: EntitySettingsOverrides,
  update: UpdateFields
): EntitySettingsOverrides => {
  const next: Record<string, unknown> = { ...current }
  for (const key of keys) {
    const value = update[fieldOf[key]]
    if (value !== undefined && value !== null) next[key] = value
  }
  return next as EntitySettingsOverrides
}

/** Reads the stored column leniently: unknown keys and values of the wrong type are dropped. */
export const decodeEntitySettings = (stored: unknown): EntitySettingsOverrides => {
  if (typeof stored !== "object" || stored === null) return {}
  const record = stored as Record<string, unknown>
  const kept: Record<string, unknown> = {}
  for (const key of keys) {
    if (typeof record[key] === typeof entitySettingsDefaults[key]) kept[key] = record[key]
  }
  return kept as EntitySettingsOverrides
}

export const effectiveEntitySettings = (overrides: EntitySettingsOverrides): EntitySettings => ({
  ...entitySettingsDefaults,
  ...overrides
})

/** The settings in the configuration view's snake_case: effective values, or only the bank's overrides. */
export const entitySettingsView = (overrides: EntitySettingsOverrides, only: "effective" | "overrides") => {
  const source: Partial<EntitySettings> = only === "effective" ? effectiveEntitySettings(overrides) : overrides
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [fieldOf[key], source[key]]))
}

/** How a stored bank is shown to clients: full bank, list item, deprecated profile, configuration view. */
import type { Bank, BankSettings } from "../domain/Bank.ts"
import { entitySettingsView } from "../domain/EntitySettings.ts"
import { pipelineSettingsView } from "../domain/PipelineSettings.ts"
import { effectiveDreamSettings } from "../dreams/DreamConfig.ts"
import { effectiveRetention } from "../domain/Retention.ts"

export interface ServerDefaults {
  readonly retainChunkSize: number
  readonly enableObservations: boolean
}

/**
 * The display name and the deprecated `mission` are never null in a bank or profile answer: Hindsight clients type
 * them as strings (a bank without a name shows its id, as Hindsight does; no mission is the empty string).
 */
const displayName = (bank: Bank) => bank.name ?? bank.bankId
const missionText = (bank: Bank) => bank.reflectMission ?? ""

export const toBankResponse = (bank: Bank, defaults: ServerDefaults) => ({
  bank_id: bank.bankId,
  name: displayName(bank),
  disposition: bank.disposition,
  mission: missionText(bank),
  background: bank.reflectMission,
  reflect_mission: bank.reflectMission,
  retain_mission: bank.retainMission,
  retain_extraction_mode: bank.retainExtractionMode ?? "concise",
  retain_custom_instructions: bank.retainCustomInstructions,
  retain_chunk_size: bank.retainChunkSize ?? defaults.retainChunkSize,
  bank_preset: bank.bankPreset,
  enable_observations: bank.enableObservations ?? defaults.enableObservations,
  observations_mission: bank.observationsMission,
  created_at: bank.createdAt.toISOString(),
  updated_at: bank.updatedAt.toISOString()
})

export const toListItem = (bank: Bank) => ({
  bank_id: bank.bankId,
  name: bank.name,
  disposition: bank.disposition,
  mission: bank.reflectMission,
  created_at: bank.createdAt.toISOString(),
  updated_at: bank.updatedAt.toISOString(),
  last_write_at: bank.lastWriteAt?.toISOString() ?? null
})

export const toProfile = (bank: Bank) => ({
  bank_id: bank.bankId,
  name: displayName(bank),
  disposition: bank.disposition,
  mission: missionText(bank),
  background: bank.reflectMission
})

/** Only the settings the bank sets itself (not null) are overrides; the rest come from the server. */
const overridesOf = (settings: BankSettings): Record<string, unknown> => {
  const entries: Array<[string, unknown]> = [
    ["reflect_mission", settings.reflectMission],
    ["retain_mission", settings.retainMission],
    ["retain_extraction_mode", settings.retainExtractionMode],
    ["retain_custom_instructions", settings.retainCustomInstructions],
    ["retain_chunk_size", settings.retainChunkSize],
    ["bank_preset", settings.bankPreset],
    ["enable_observations", settings.enableObservations],
    ["observations_mission", settings.observationsMission]
  ]
  return {
    ...Object.fromEntries(entries.filter(([, value]) => value !== null)),
    ...entitySettingsView(settings.entitySettings, "overrides"),
    ...pipelineSettingsView(settings.pipelineSettings, "overrides"),
    ...(Object.keys(settings.dreamSettings).length > 0 ? { dream: settings.dreamSettings } : {}),
    ...(Object.keys(settings.retentionSettings).length > 0 ? { retention: settings.retentionSettings } : {})
  }
}

export const toConfigView = (bank: Bank, defaults: ServerDefaults) => {
  const full = toBankResponse(bank, defaults)
  const overrides = overridesOf(bank)
  const isDefault = bank.disposition.skepticism === 3 && bank.disposition.literalism === 3 &&
    bank.disposition.empathy === 3
  return {
    bank_id: bank.bankId,
    config: {
      reflect_mission: full.reflect_mission,
      retain_mission: full.retain_mission,
      retain_extraction_mode: full.retain_extraction_mode,
      retain_custom_instructions: full.retain_custom_instructions,
      retain_chunk_size: full.retain_chunk_size,
      bank_preset: full.bank_preset,
      enable_observations: full.enable_observations,
      observations_mission: full.observations_mission,
      disposition: full.disposition,
      ...entitySettingsView(bank.entitySettings, "effective"),
      ...pipelineSettingsView(bank.pipelineSettings, "effective"),
      dream: effectiveDreamSettings(bank.dreamSettings),
      retention: effectiveRetention(bank.retentionSettings)
    },
    overrides: isDefault ? overrides : { ...overrides, disposition: bank.disposition }
  }
}

/**
 * Pure rules for applying a bank create/update body onto stored settings: deprecated aliases, disposition
 * shortcuts, presets. No I/O here, so the rules are easy to read and to test.
 */
import type { BankSettings, BankUpdate } from "../domain/Bank.ts"
import { defaultDisposition } from "../domain/Bank.ts"
import { applyEntitySettingsUpdate } from "../domain/EntitySettings.ts"
import { applyPipelineUpdate } from "../domain/PipelineSettings.ts"
import { applyDreamUpdate } from "../dreams/DreamConfig.ts"
import { applyRetentionUpdate } from "../domain/Retention.ts"
import { mergeBankPreset, presetNames } from "../presets/BankPresets.ts"

/** Presets this server knows; any other `bank_preset` value is ignored without error, as the spec asks. */
export const knownPresets: ReadonlySet<string> = new Set(presetNames)

export const emptySettings: BankSettings = {
  name: null,
  reflectMission: null,
  retainMission: null,
  retainExtractionMode: null,
  retainCustomInstructions: null,
  retainChunkSize: null,
  bankPreset: null,
  enableObservations: null,
  observationsMission: null,
  disposition: defaultDisposition,
  entitySettings: {},
  dreamSettings: {},
  pipelineSettings: {},
  retentionSettings: {}
}

/** `null` and absent leave a value unchanged; an empty string clears a text setting back to its default. */
const text = (next: string | null | undefined, current: string | null) =>
  next === undefined || next === null ? current : next === "" ? null : next

const keep = <A>(next: A | null | undefined, current: A | null): A | null =>
  next === undefined || next === null ? current : next

export const applyBankUpdate = (current: BankSettings, request: BankUpdate): BankSettings => {
  // A named preset fills in the settings the request leaves unset (src/presets/BankPresets.ts).
  const update = mergeBankPreset(request, current.bankPreset)
  const mission = update.reflect_mission ?? update.mission ?? update.background
  const base = update.disposition ?? current.disposition
  const preset = update.bank_preset
  return {
    name: text(update.name, current.name),
    reflectMission: text(mission, current.reflectMission),
    retainMission: text(update.retain_mission, current.retainMission),
    retainExtractionMode: keep(update.retain_extraction_mode, current.retainExtractionMode),
    retainCustomInstructions: text(update.retain_custom_instructions, current.retainCustomInstructions),
    retainChunkSize: keep(update.retain_chunk_size, current.retainChunkSize),
    bankPreset: preset !== undefined && preset !== null && knownPresets.has(preset) ? preset : current.bankPreset,
    enableObservations: keep(update.enable_observations, current.enableObservations),
    observationsMission: text(update.observations_mission, current.observationsMission),
    disposition: {
      skepticism: update.disposition_skepticism ?? base.skepticism,
      literalism: update.disposition_literalism ?? base.literalism,
      empathy: update.disposition_empathy ?? base.empathy
    },
    entitySettings: applyEntitySettingsUpdate(current.entitySettings, update),
    dreamSettings: applyDreamUpdate(current.dreamSettings, update.dream),
    pipelineSettings: applyPipelineUpdate(current.pipelineSettings, update),
    retentionSettings: applyRetentionUpdate(current.retentionSettings, update.retention)
  }
}

/** What DELETE {bank}/config does: every setting back to the server default; the bank keeps its name. */
export const resetSettings = (current: BankSettings): BankSettings => ({ ...emptySettings, name: current.name })

/**
 * Bank presets as data: named starter configurations merged into a bank create/update body (explicit fields
 * win), and the playbook items (a directive, pinned mental models) seeded once when a preset is applied.
 * Adding a preset is adding an entry to `bankPresets`; nothing else names them.
 */
import type { BankUpdate } from "../domain/Bank.ts"

export interface PresetDirective {
  readonly name: string
  readonly content: string
  readonly priority: number
}

export interface PresetMentalModel {
  /**
   * Stable across servers and releases, so seeding twice finds the first copy: uuid5 of
   * "codebase|<part>" in namespace 612e9610-4b14-4f6d-a58b-9aae18f7c1e0, the ids existing clients know.
   */
  readonly id: string
  readonly name: string
  readonly sourceQuery: string
  readonly content: string
}

export interface BankPreset {
  /** Settings merged under the request's own fields. */
  readonly settings: Partial<BankUpdate>
  /** Tags every seeded item carries (besides the ones listed per item). */
  readonly tags: ReadonlyArray<string>
  readonly directives: ReadonlyArray<PresetDirective>
  readonly mentalModels: ReadonlyArray<PresetMentalModel>
  readonly mentalModelTags: ReadonlyArray<string>
}

const codebase: BankPreset = {
  settings: {
    retain_extraction_mode: "custom",
    retain_custom_instructions:
      "The content is source code or notes about a code base. Extract technical facts: what each module, " +
      "function, class or configuration does, what it depends on and calls, its inputs and outputs, invariants, " +
      "error handling and known limitations. Keep file paths, symbol names and line ranges exactly as written. " +
      "Skip formatting, licence headers and boilerplate.",
    retain_mission: "Remember how this code base is built and why: modules, interfaces, dependencies and decisions.",
    reflect_mission:
      "Answer engineering questions about this code base from its retained facts, citing file paths and line " +
      "ranges; say what is unknown instead of guessing.",
    observations_mission:
      "Consolidate recurring facts about modules, ownership, dependencies, conventions and risks of the code base.",
    enable_observations: true
  },
  tags: ["preset:codebase"],
  directives: [
    {
      name: "Codebase: evidence-first answers",
      priority: 40,
      content:
        "When answering from code-backed memories, treat the file path and line range as the primary provenance " +
        "and cite them. Prefer memories scoped to the code base over speculation. If the routed chunks or facts " +
        "needed are missing, say so instead of inventing APIs, call graphs or file layout."
    }
  ],
  mentalModelTags: ["preset:codebase", "developer-guide"],
  mentalModels: [
    {
      id: "9e3febb0-54c2-5dbf-ad60-a8af70bf437e",
      name: "Codebase review → memory workflow",
      sourceQuery: "What is the recommended workflow from import to hydrated memory for a repository bank?",
      content: [
        "# Codebase review → memory workflow",
        "1. **Import** the repository (archive, file or git-host reference); it is parsed into a reviewable snapshot.",
        "2. **Review** files, symbols, chunks and clusters; use impact analysis before deciding.",
        "3. **Route** chunks to memory, research or dismissed.",
        "4. **Approve** the snapshot: routed chunks are hydrated into bank memory.",
        "5. **Recall & reflect** over the hydrated memories.",
        "Re-run the review and approval when the tree changes materially."
      ].join("\n")
    },
    {
      id: "ab066fc1-0753-5185-99d5-217986e6a704",
      name: "How to read code-backed memories",
      sourceQuery: "How should developers interpret retained code facts, headers, and previews?",
      content: [
        "# How to read code-backed memories",
        "- Each code memory starts with a `# path … lines` header: the file and line range it came from.",
        "- Path and line columns are structured, so they can be filtered and cited exactly.",
        "- Previews collapse whitespace; open the chunk for the exact text.",
        "- Tags `scope:codebase` and `codebase:<id>` tell which import a memory came from."
      ].join("\n")
    },
    {
      id: "fe1d3e9a-1844-5ab0-a206-ab2b97540847",
      name: "Operating tips for engineering banks",
      sourceQuery: "What practical tips keep codebase memory banks accurate and cheap to run?",
      content: [
        "# Operating tips for engineering banks",
        "- Route deliberately: only chunks worth remembering go to memory.",
        "- Refresh after refactors so stale facts are replaced.",
        "- Lean on observations to consolidate conventions and ownership.",
        "- Reflect honestly: missing evidence is an answer.",
        "Items seeded by this preset are tagged `preset:codebase`."
      ].join("\n")
    }
  ]
}

export const bankPresets: Readonly<Record<string, BankPreset>> = { codebase }

export const presetNames: ReadonlyArray<string> = Object.keys(bankPresets).sort()

/** The preset a request names, case-insensitively; unknown names are none (ignored without error). */
export const findPreset = (name: string | null | undefined) => {
  if (name === undefined || name === null) return undefined
  const key = name.trim().toLowerCase()
  const preset = bankPresets[key]
  return preset === undefined ? undefined : { name: key, preset }
}

/**
 * The request with the preset's settings filled in where the request does not set them itself. Naming the
 * preset the bank already has merges nothing again, so settings changed since the preset was applied stay.
 */
export const mergeBankPreset = (update: BankUpdate, currentPreset: string | null = null): BankUpdate => {
  const found = findPreset(update.bank_preset)
  if (found === undefined) return update
  const merged: Record<string, unknown> = found.name === currentPreset ? {} : { ...found.preset.settings }
  for (const [key, value] of Object.entries(update)) {
    if (value !== undefined && value !== null) merged[key] = value
  }
  merged["bank_preset"] = found.name
  return merged as BankUpdate
}

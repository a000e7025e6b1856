/** A bank's settings: name, missions, disposition, preset, retain options; its statistics; deleting it. */
import { useEffect, useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { JsonView } from "../components/JsonView.tsx"
import { ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"
import { hrefOf, navigate } from "../router.ts"
import { usePresets } from "./BanksPage.tsx"

type Config = Record<string, any>

const traits = ["skepticism", "literalism", "empathy"] as const
const missions = [
  ["reflect_mission", "Reflect mission"],
  ["retain_mission", "Retain mission"],
  ["observations_mission", "Observations mission"],
  ["retain_custom_instructions", "Retain custom instructions"]
] as const

export const BankSettingsPage = ({ bank }: { bank: string }) => {
  const config = useResource(() => get<{ config: Config }>(bankPath(bank, "/config")), [bank])
  const stats = useResource(() => get(bankPath(bank, "/stats")), [bank])
  const presets = usePresets()
  const save = useAction()
  const remove = useAction()
  const [draft, setDraft] = useState<Config | null>(null)
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    if (config.data) setDraft(config.data.config)
  }, [config.data])
  const set = (name: string, value: unknown) => {
    setSaved(false)
    setDraft((previous) => ({ ...previous, [name]: value }))
  }

  return (
    <>
      <Loaded resource={config} what="Loading settings">
        {() =>
          draft && (
            <form
              class="card grid-form"
              onSubmit={async (event) => {
                event.preventDefault()
                const update = {
                  reflect_mission: draft["reflect_mission"] || null,
                  retain_mission: draft["retain_mission"] || null,
                  observations_mission: draft["observations_mission"] || null,
                  retain_custom_instructions: draft["retain_custom_instructions"] || null,
                  retain_extraction_mode: draft["retain_extraction_mode"],
                  retain_chunk_size: Number(draft["retain_chunk_size"]),
                  enable_observations: draft["enable_observations"],
                  bank_preset: draft["bank_preset"] || null,
                  disposition: draft["disposition"]
                }
                const done = await save.run(() => request("PATCH", bankPath(bank), update))
                if (done !== undefined) {
                  setSaved(true)
                  config.reload()
                }
              }}
            >
              <h2 class="wide">Settings</h2>
              {missions.map(([name, label]) => (
                <label class="wide">
                  {label}
                  <textarea
                    rows={2}
                    name={name}
                    value={draft[name] ?? ""}
                    onInput={(e) => set(name, e.currentTarget.value)}
                  />
                </label>
              ))}
              <fieldset class="wide">
                <legend>Disposition (1–5)</legend>
                {traits.map((trait) => (
                  <label class="inline">
                    {trait}
                    <input
                      type="range"
                      min={1}
                      max={5}
                      name={trait}
                      value={draft["disposition"]?.[trait] ?? 3}
                      onInput={(e) =>
                        set("disposition", { ...draft["disposition"], [trait]: Number(e.currentTarget.value) })}
                    />
                    <output>{draft["disposition"]?.[trait] ?? 3}</output>
                  </label>
                ))}
              </fieldset>
              <label>
                Extraction mode
                <select
                  value={draft["retain_extraction_mode"] ?? "concise"}
                  onChange={(e) => set("retain_extraction_mode", e.currentTarget.value)}
                >
                  {["concise", "verbose", "custom"].map((mode) => <option value={mode}>{mode}</option>)}
                </select>
              </label>
              <label>
                Chunk size (tokens)
                <input
                  type="number"
                  min={16}
                  max={65536}
                  value={draft["retain_chunk_size"] ?? 512}
                  onInput={(e) => set("retain_chunk_size", e.currentTarget.value)}
                />
              </label>
              <label>
                Preset
                <select value={draft["bank_preset"] ?? ""} onChange={(e) => set("bank_preset", e.currentTarget.value)}>
                  <option value="">none</option>
                  {presets.data?.bank_presets?.map((preset) => <option value={preset}>{preset}</option>)}
                </select>
              </label>
              <label class="inline">
                <input
                  type="checkbox"
                  checked={draft["enable_observations"] === true}
                  onChange={(e) => set("enable_observations", e.currentTarget.checked)}
                />
                Consolidate into observations
              </label>
              <div class="actions wide">
                <button type="submit" disabled={save.busy}>{save.busy ? "Saving…" : "Save settings"}</button>
                {saved && <span role="status" class="ok">Saved.</span>}
              </div>
              <div class="wide">
                <ErrorBox error={save.error} />
              </div>
              <div class="wide">
                <JsonView value={config.data?.config} label="Effective configuration (all fields)" />
              </div>
            </form>
          )}
      </Loaded>
      <section class="card">
        <h2>Statistics</h2>
        <Loaded resource={stats}>{(data) => <JsonView value={data} label="Counts by type and link" open />}</Loaded>
      </section>
      <section class="card danger">
        <h2>Delete the bank</h2>
        <p>Deletes every memory, document and setting of “{bank}”.</p>
        <button
          type="button"
          class="danger"
          disabled={remove.busy}
          onClick={async () => {
            if (!window.confirm(`Delete bank “${bank}” and everything in it?`)) return
            const done = await remove.run(() => request("DELETE", bankPath(bank)))
            if (done !== undefined) navigate(hrefOf(null, "banks"))
          }}
        >
          Delete bank
        </button>
        <ErrorBox error={remove.error} />
      </section>
    </>
  )
}

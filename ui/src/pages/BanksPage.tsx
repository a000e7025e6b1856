/** Every bank with its mission, and a form to create one (id, name, mission, preset). */
import { useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { when } from "../components/JsonView.tsx"
import { ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"
import { hrefOf, linkHandler, navigate } from "../router.ts"

interface BankItem {
  bank_id: string
  name: string | null
  mission: string | null
  disposition: { skepticism: number; literalism: number; empathy: number }
  created_at: string
}

export const usePresets = () => useResource(() => get<{ bank_presets?: Array<string> }>("/version"), [])

export const BanksPage = ({ onChanged }: { onChanged: () => void }) => {
  const banks = useResource(() => get<{ banks: Array<BankItem> }>("/v1/default/banks"), [])
  const presets = usePresets()
  const create = useAction()
  const [form, setForm] = useState({ id: "", name: "", mission: "", preset: "" })
  const field = (name: keyof typeof form) => ({
    value: form[name],
    onInput: (event: Event) => setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value })
  })

  return (
    <>
      <section class="card">
        <h2>Create a bank</h2>
        <form
          class="grid-form"
          onSubmit={async (event) => {
            event.preventDefault()
            const created = await create.run(() =>
              request("PUT", bankPath(form.id.trim()), {
                ...(form.name.trim() === "" ? {} : { name: form.name.trim() }),
                ...(form.mission.trim() === "" ? {} : { reflect_mission: form.mission.trim() }),
                ...(form.preset === "" ? {} : { bank_preset: form.preset })
              })
            )
            if (created !== undefined) {
              onChanged()
              navigate(hrefOf(form.id.trim(), "memories"))
            }
          }}
        >
          <label>
            Bank id <input name="bank_id" required {...field("id")} placeholder="e.g. support-agent" />
          </label>
          <label>
            Name <input name="name" {...field("name")} />
          </label>
          <label class="wide">
            Mission <textarea name="mission" rows={2} {...field("mission")} />
          </label>
          <label>
            Preset
            <select {...field("preset")} onChange={(event) => setForm({ ...form, preset: event.currentTarget.value })}>
              <option value="">none</option>
              {presets.data?.bank_presets?.map((preset) => <option value={preset}>{preset}</option>)}
            </select>
          </label>
          <div class="actions">
            <button type="submit" disabled={create.busy}>{create.busy ? "Creating…" : "Create bank"}</button>
          </div>
        </form>
        <ErrorBox error={create.error} />
      </section>
      <section>
        <h2>Banks</h2>
        <Loaded resource={banks} what="Loading banks">
          {(data) => (
            <DataTable
              caption="Banks"
              rows={data.banks}
              empty="No bank yet: create one above."
              columns={[
                {
                  label: "Bank",
                  render: (b) => <a href={hrefOf(b.bank_id, "memories")} onClick={linkHandler}>{b.bank_id}</a>
                },
                { label: "Name", render: (b) => b.name ?? "—" },
                { label: "Mission", render: (b) => b.mission ?? "—" },
                {
                  label: "Disposition",
                  render: (b) => `S${b.disposition.skepticism} L${b.disposition.literalism} E${b.disposition.empathy}`
                },
                { label: "Created", render: (b) => when(b.created_at) },
                { label: "", render: (b) => <a href={hrefOf(b.bank_id, "settings")} onClick={linkHandler}>Settings</a> }
              ]}
            />
          )}
        </Loaded>
      </section>
    </>
  )
}

/**
 * The recall debugger: every option of the recall request, and from the trace each strategy's candidates with
 * ranks and scores, the fused ranking (RRF, per-strategy ranks, final score), stage timings and the results.
 */
import { useEffect, useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView, short } from "../components/JsonView.tsx"
import { Empty, ErrorBox } from "../components/States.tsx"
import { useAction } from "../hooks.ts"

interface Candidate {
  id: string
  rank: number
  score: number
}
interface Fused {
  id: string
  rrf: number
  fused: number
  ranks: Record<string, number>
  score: number
}
interface Trace {
  query: string
  budget: string
  depth: number
  types: Array<string>
  time_window: { start: string; end: string } | null
  strategies: Record<string, { duration_ms: number; candidates: Array<Candidate> }>
  fusion: Array<Fused>
  reranker: Record<string, unknown>
  results_tokens: number
  stages_ms: Record<string, number>
  total_ms: number
}
interface RecallResponse {
  results: Array<{ id: string; text: string; type: string; score?: number; tags: Array<string> }>
  trace: Trace | null
  entities: unknown
  chunks: unknown
  source_facts: unknown
}

const allTypes = ["world", "experience", "observation", "opinion"] as const

const initial = {
  query: "",
  types: [] as Array<string>,
  budget: "mid",
  max_tokens: "4096",
  query_timestamp: "",
  tags: "",
  tags_match: "any",
  tag_groups: "",
  prefer_observations: false,
  min_score: "",
  branch_name: "",
  entities: true,
  entities_max: "500",
  chunks: false,
  chunks_max: "8192",
  source_facts: false,
  source_facts_max: "4096",
  source_facts_per_observation: "-1"
}
type Form = typeof initial

/** The request body exactly as the API takes it; a malformed tag_groups is reported here, not sent. */
const toRequest = (form: Form) => {
  const tags = form.tags.split(",").map((tag) => tag.trim()).filter((tag) => tag !== "")
  let tagGroups: unknown = undefined
  if (form.tag_groups.trim() !== "") {
    try {
      tagGroups = JSON.parse(form.tag_groups)
    } catch {
      throw new Error("tag_groups: not valid JSON (expected a list of groups, e.g. [{\"tags\": [\"a\"]}])")
    }
  }
  return {
    query: form.query,
    trace: true,
    budget: form.budget,
    ...(form.types.length > 0 ? { types: form.types } : {}),
    ...(form.max_tokens !== "" ? { max_tokens: Number(form.max_tokens) } : {}),
    ...(form.query_timestamp !== "" ? { query_timestamp: new Date(form.query_timestamp).toISOString() } : {}),
    ...(tags.length > 0 ? { tags, tags_match: form.tags_match } : {}),
    ...(tagGroups !== undefined ? { tag_groups: tagGroups } : {}),
    ...(form.prefer_observations ? { prefer_observations: true } : {}),
    ...(form.min_score !== "" ? { min_score: { threshold: Number(form.min_score) } } : {}),
    ...(form.branch_name !== "" ? { branch_name: form.branch_name } : {}),
    include: {
      entities: form.entities ? { max_tokens: Number(form.entities_max) } : null,
      ...(form.chunks ? { chunks: { max_tokens: Number(form.chunks_max) } } : {}),
      ...(form.source_facts
        ? {
          source_facts: {
            max_tokens: Number(form.source_facts_max),
            max_tokens_per_observation: Number(form.source_facts_per_observation)
          }
        }
        : {})
    }
  }
}

export const RecallPage = ({ bank }: { bank: string }) => {
  const [form, setForm] = useState<Form>(initial)
  const [response, setResponse] = useState<RecallResponse | null>(null)
  const recall = useAction()
  const texts = useMemoryTexts(bank, response)
  const text = (name: keyof Form) => ({
    name,
    value: form[name] as string,
    onInput: (event: Event) => setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value })
  })
  const check = (name: keyof Form) => ({
    name,
    checked: form[name] as boolean,
    onChange: (event: Event) => setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).checked })
  })

  return (
    <>
      <form
        class="card grid-form recall-form"
        aria-label="Recall request"
        onSubmit={async (event) => {
          event.preventDefault()
          const result = await recall.run(() =>
            request<RecallResponse>("POST", bankPath(bank, "/memories/recall"), toRequest(form))
          )
          if (result !== undefined) setResponse(result)
        }}
      >
        <label class="wide">
          Query <input required {...text("query")} placeholder="What does the user prefer?" />
        </label>
        <fieldset>
          <legend>Types (none = world + experience)</legend>
          {allTypes.map((type) => (
            <label class="inline">
              <input
                type="checkbox"
                checked={form.types.includes(type)}
                onChange={(e) =>
                  setForm({
                    ...form,
                    types: e.currentTarget.checked ? [...form.types, type] : form.types.filter((t) => t !== type)
                  })}
              />
              {type}
            </label>
          ))}
        </fieldset>
        <label>
          Budget
          <select {...text("budget")} onChange={(e) => setForm({ ...form, budget: e.currentTarget.value })}>
            {["low", "mid", "high"].map((budget) => <option value={budget}>{budget}</option>)}
          </select>
        </label>
        <label>
          Max tokens <input type="number" min={0} {...text("max_tokens")} />
        </label>
        <label>
          Min score (0–1) <input type="number" min={0} max={1} step={0.05} {...text("min_score")} />
        </label>
        <label>
          Query time <input type="datetime-local" {...text("query_timestamp")} />
        </label>
        <label>
          Branch <input {...text("branch_name")} placeholder="main" />
        </label>
        <label>
          Tags (comma-separated) <input {...text("tags")} />
        </label>
        <label>
          Tags match
          <select {...text("tags_match")} onChange={(e) => setForm({ ...form, tags_match: e.currentTarget.value })}>
            {["any", "all", "any_strict", "all_strict"].map((match) => <option value={match}>{match}</option>)}
          </select>
        </label>
        <label class="wide">
          Tag groups (JSON, instead of tags){" "}
          <textarea rows={2} {...text("tag_groups")} placeholder='[{"or": [{"tags": ["a"]}, {"tags": ["b"]}]}]' />
        </label>
        <label class="inline">
          <input type="checkbox" {...check("prefer_observations")} /> Prefer observations
        </label>
        <fieldset class="wide">
          <legend>Include</legend>
          <label class="inline">
            <input type="checkbox" {...check("entities")} /> entities, max tokens
          </label>
          <input
            aria-label="entities max tokens"
            type="number"
            min={0}
            {...text("entities_max")}
            disabled={!form.entities}
          />
          <label class="inline">
            <input type="checkbox" {...check("chunks")} /> chunks, max tokens
          </label>
          <input aria-label="chunks max tokens" type="number" min={0} {...text("chunks_max")} disabled={!form.chunks} />
          <label class="inline">
            <input type="checkbox" {...check("source_facts")} /> source facts, max tokens / per observation
          </label>
          <input
            aria-label="source facts max tokens"
            type="number"
            min={-1}
            {...text("source_facts_max")}
            disabled={!form.source_facts}
          />
          <input
            aria-label="source facts max tokens per observation"
            type="number"
            min={-1}
            {...text("source_facts_per_observation")}
            disabled={!form.source_facts}
          />
        </fieldset>
        <div class="actions wide">
          <button type="submit" disabled={recall.busy}>{recall.busy ? "Recalling…" : "Run recall"}</button>
        </div>
        <div class="wide">
          <ErrorBox error={recall.error} />
        </div>
      </form>
      {response !== null && <RecallResult response={response} texts={texts} />}
    </>
  )
}

/** Texts of every candidate id, from the results and then (for candidates that did not make it) from the API. */
const useMemoryTexts = (bank: string, response: RecallResponse | null) => {
  const [texts, setTexts] = useState(new Map<string, string>())
  useEffect(() => {
    if (response === null) return
    const known = new Map(response.results.map((result) => [result.id, result.text]))
    setTexts(new Map(known))
    const ids = new Set<string>()
    for (const run of Object.values(response.trace?.strategies ?? {})) run.candidates.forEach((c) => ids.add(c.id))
    response.trace?.fusion.forEach((f) => ids.add(f.id))
    const missing = [...ids].filter((id) => !known.has(id)).slice(0, 60)
    let cancelled = false
    void Promise.all(
      missing.map((id) =>
        get<{ text: string }>(bankPath(bank, `/memories/${encodeURIComponent(id)}`)).then(
          (m) => [id, m.text] as const,
          () => null
        )
      )
    ).then((found) => {
      if (cancelled) return
      setTexts(new Map([...known, ...found.filter((entry): entry is readonly [string, string] => entry !== null)]))
    })
    return () => {
      cancelled = true
    }
  }, [response])
  return texts
}

const RecallResult = ({ response, texts }: { response: RecallResponse; texts: Map<string, string> }) => {
  const trace = response.trace
  const inResults = new Set(response.results.map((result) => result.id))
  const label = (id: string) => <span title={id}>{texts.get(id) ?? <code>{short(id)}</code>}</span>
  if (trace === null) return <Empty>The server returned no trace.</Empty>
  const strategies = Object.entries(trace.strategies)
  const maxStage = Math.max(1, ...Object.values(trace.stages_ms))
  return (
    <div class="recall-result">
      <section class="card" aria-label="Summary">
        <h2>Summary</h2>
        <dl class="facts">
          <dt>Total</dt>
          <dd>{trace.total_ms} ms</dd>
          <dt>Results</dt>
          <dd>{response.results.length} ({trace.results_tokens} tokens)</dd>
          <dt>Budget / depth</dt>
          <dd>{trace.budget} / {trace.depth}</dd>
          <dt>Types</dt>
          <dd>{trace.types.join(", ")}</dd>
          <dt>Time window</dt>
          <dd>{trace.time_window ? `${trace.time_window.start} → ${trace.time_window.end}` : "none"}</dd>
          <dt>Reranker</dt>
          <dd>{String(trace.reranker["model"] ?? "—")}</dd>
        </dl>
      </section>
      <section class="card" aria-label="Stage timings">
        <h2>Stage timings</h2>
        <ul class="bars">
          {Object.entries(trace.stages_ms).map(([stage, ms]) => (
            <li>
              <span class="bar-label">{stage}</span>
              <span class="bar" style={{ width: `${Math.max(1, (ms / maxStage) * 100)}%` }} />
              <span class="bar-value">{ms.toFixed(2)} ms</span>
            </li>
          ))}
        </ul>
      </section>
      <div class="strategies">
        {strategies.map(([name, run]) => (
          <section class="card strategy" aria-label={`Strategy ${name}`} data-strategy={name}>
            <h2>
              {name} <span class="muted">· {run.candidates.length} candidates · {run.duration_ms} ms</span>
            </h2>
            <DataTable
              caption={`${name} candidates`}
              rows={run.candidates}
              empty="No candidate from this strategy."
              columns={[
                {
                  label: "#",
                  render: (c) =>
                    c.rank
                },
                {
                  label: "Score",
                  render: (c) =>
                    c.score.toFixed(4)
                },
                {
                  label: "Memory",
                  render: (c) =>
                    label(c.id)
                },
                { label: "Kept", render: (c) => (inResults.has(c.id) ? "✓" : "") }
              ]}
            />
          </section>
        ))}
      </div>
      <section class="card" aria-label="Fused ranking">
        <h2>
          Fused ranking <span class="muted">· reciprocal rank fusion, then rerank</span>
        </h2>
        <DataTable
          caption="Fused ranking"
          rows={trace.fusion}
          empty="Nothing was fused."
          columns={[
            { label: "#", render: (f) => trace.fusion.indexOf(f) + 1 },
            { label: "Final score", render: (f) => f.score.toFixed(4) },
            { label: "RRF", render: (f) => f.rrf.toFixed(5) },
            { label: "Fused", render: (f) => f.fused.toFixed(4) },
            ...strategies.map(([name]) => ({ label: `${name} rank`, render: (f: Fused) => f.ranks[name] ?? "—" })),
            { label: "Memory", render: (f) => label(f.id) },
            { label: "Returned", render: (f) => (inResults.has(f.id) ? "✓" : "") }
          ]}
        />
      </section>
      <section class="card" aria-label="Results">
        <h2>Results</h2>
        <DataTable
          caption="Results"
          rows={response.results}
          empty="No result (all below the minimum score, outside the token budget, or nothing matches)."
          columns={[
            { label: "Score", render: (r) => r.score?.toFixed(4) ?? "—" },
            { label: "Type", render: (r) => <span class={`pill ${r.type}`}>{r.type}</span> },
            { label: "Text", render: (r) => r.text }
          ]}
        />
        {response.entities !== null && <JsonView value={response.entities} label="Entities" />}
        {response.chunks !== null && <JsonView value={response.chunks} label="Chunks" />}
        {response.source_facts !== null && <JsonView value={response.source_facts} label="Source facts" />}
        <JsonView value={trace} label="Raw trace" />
      </section>
    </div>
  )
}

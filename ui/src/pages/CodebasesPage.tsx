/**
 * Codebase review: the bank's codebases; for the chosen one its review counts, the chunks of its current snapshot
 * (most significant first, filterable by route), routing of the selected chunks to memory, research or dismissed,
 * and approval into memory (`direct`: chunks stored with path:line provenance, no LLM).
 */
import { useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"

interface Codebase {
  id: string
  name: string
  snapshot_status: string | null
  approval_status: string | null
  memory_status: string | null
}
interface Chunk {
  id: string
  path: string
  start_line: number
  end_line: number
  kind: string
  label: string
  route_target: string
  significance_score: number
  safety_tags: ReadonlyArray<string>
}

const targets = ["memory", "research", "dismissed", "unrouted"] as const

export const CodebasesPage = ({ bank }: { bank: string }) => {
  const codebases = useResource(() => get<{ items: Array<Codebase> }>(bankPath(bank, "/codebases")), [bank])
  const [selected, setSelected] = useState<string | null>(null)
  return (
    <>
      <section class="card" aria-label="Codebases">
        <h2>Codebases</h2>
        <Loaded resource={codebases}>
          {(data) => (
            <DataTable
              caption="Codebases"
              rows={data.items}
              empty="No codebase imported: use POST …/codebases/import/zip or `engram codebase import`."
              columns={[
                {
                  label: "",
                  render: (row) => (
                    <button
                      type="button"
                      class="link"
                      onClick={() => setSelected(row.id)}
                    >
                      Review {row.name}
                    </button>
                  )
                },
                { label: "snapshot", render: (row) => row.snapshot_status ?? "—" },
                { label: "approval", render: (row) => row.approval_status ?? "—" },
                { label: "memory", render: (row) => row.memory_status ?? "—" }
              ]}
            />
          )}
        </Loaded>
      </section>
      {selected !== null && (
        <CodebaseReview key={selected} bank={bank} codebaseId={selected} onChanged={codebases.reload} />
      )}
    </>
  )
}

const CodebaseReview = (
  { bank, codebaseId, onChanged }: { bank: string; codebaseId: string; onChanged: () => void }
) => {
  const base = bankPath(bank, `/codebases/${encodeURIComponent(codebaseId)}`)
  const [filter, setFilter] = useState("")
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set())
  const review = useResource(() => get(`${base}/review`), [base])
  const chunks = useResource(
    () =>
      get<{ items: Array<Chunk> }>(`${base}/chunks`, { order_by: "significance", limit: 100, route_target: filter }),
    [base, filter]
  )
  const action = useAction()
  const [message, setMessage] = useState("")

  const refresh = () => {
    review.reload()
    chunks.reload()
    onChanged()
  }
  const route = async (target: string) => {
    const done = await action.run(() => request("POST", `${base}/review/route`, { item_ids: [...picked], target }))
    if (done !== undefined) {
      setMessage(`${done.updated_count} chunk(s) routed to ${target}.`)
      setPicked(new Set())
      refresh()
    }
  }
  const approve = async () => {
    const done = await action.run(() => request("POST", `${base}/approve`, { memory_ingest_mode: "direct" }))
    if (done !== undefined) {
      setMessage(`Approval queued as operation ${done.operation_id}: the chunks routed to memory become memories.`)
      refresh()
    }
  }
  const toggle = (id: string) =>
    setPicked((previous) => {
      const next = new Set(previous)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })

  return (
    <section class="card" aria-label="Codebase review">
      <h2>Review</h2>
      <Loaded resource={review}>
        {(data) => (
          <dl class="facts">
            <dt>Snapshot</dt>
            <dd>{data.snapshot_status ?? "—"}</dd>
            <dt>Approval</dt>
            <dd>{data.approval_status ?? "—"}</dd>
            {Object.entries(data.review_counts ?? {}).map(([name, count]) => (
              <>
                <dt>{name}</dt>
                <dd>{String(count)}</dd>
              </>
            ))}
          </dl>
        )}
      </Loaded>
      <div class="actions" style={{ flexWrap: "wrap", margin: "10px 0" }}>
        <label>
          Route{" "}
          <select
            aria-label="Show chunks routed to"
            value={filter}
            onChange={(event) => setFilter(event.currentTarget.value)}
          >
            <option value="">all</option>
            {targets.map((target) => <option value={target}>{target}</option>)}
          </select>
        </label>
        {targets.map((target) => (
          <button
            type="button"
            disabled={picked.size === 0 || action.busy}
            onClick={() => route(target)}
          >
            Route {picked.size} to {target}
          </button>
        ))}
        <button type="button" disabled={action.busy} onClick={approve}>Approve into memory</button>
      </div>
      <ErrorBox error={action.error} />
      {message !== "" && <p role="status">{message}</p>}
      <Loaded resource={chunks}>
        {(data) => (
          <DataTable
            caption="Chunks, most significant first"
            rows={data.items}
            empty="No chunk in this snapshot with that route."
            columns={[
              {
                label: "pick",
                render: (chunk) => (
                  <input
                    type="checkbox"
                    checked={picked.has(chunk.id)}
                    onChange={() => toggle(chunk.id)}
                    aria-label={`Pick ${chunk.label}`}
                  />
                )
              },
              { label: "chunk", render: (chunk) => <code>{chunk.path}:{chunk.start_line}-{chunk.end_line}</code> },
              { label: "symbol", render: (chunk) => `${chunk.kind} ${chunk.label}` },
              { label: "significance", render: (chunk) => chunk.significance_score.toFixed(2) },
              { label: "route", render: (chunk) => chunk.route_target },
              { label: "safety", render: (chunk) => chunk.safety_tags.join(", ") || "—" }
            ]}
          />
        )}
      </Loaded>
    </section>
  )
}

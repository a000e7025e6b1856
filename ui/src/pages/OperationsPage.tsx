/**
 * Background operations: status, progress and stage of the active ones, cancel, retry, result. Refreshes every
 * two seconds only while some operation is pending or running, and not while the tab is hidden.
 */
import { useEffect, useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView, short, when } from "../components/JsonView.tsx"
import { ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"
import { Pager } from "./MemoriesPage.tsx"

interface Operation {
  id: string
  task_type: string
  items_count: number
  created_at: string
  status: string
  error_message: string | null
}
interface Detail {
  operation_id: string
  stage?: string | null
  progress?: { done: number; total: number } | null
  attempts: number
}
interface Listing {
  operations: Array<Operation>
  total: number
  worker: Record<string, unknown>
}

const pageSize = 25
const active = (status: string) => status === "pending" || status === "running"

const loadListing = async (bank: string, status: string, offset: number) => {
  const listing = await get<Listing>(bankPath(bank, "/operations"), { status, limit: pageSize, offset })
  // Progress and stage are on the detail only: read them for the operations still moving.
  const details = await Promise.all(
    listing.operations.filter((op) => active(op.status)).slice(0, 10).map((op) =>
      get<Detail>(bankPath(bank, `/operations/${encodeURIComponent(op.id)}`)).catch(() => null)
    )
  )
  return {
    ...listing,
    details: new Map(details.filter((d): d is Detail => d !== null).map((d) => [d.operation_id, d]))
  }
}

export const OperationsPage = ({ bank }: { bank: string }) => {
  const [status, setStatus] = useState("")
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<string | null>(null)
  const listing = useResource(() => loadListing(bank, status, offset), [bank, status, offset])
  const action = useAction()
  const anyActive = listing.data?.operations.some((op) => active(op.status)) ?? false

  useEffect(() => {
    if (!anyActive || listing.loading) return
    const timer = window.setTimeout(() => {
      if (!document.hidden) listing.reload()
    }, 2000)
    return () => window.clearTimeout(timer)
  }, [anyActive, listing.loading, listing.data])

  const act = async (method: string, id: string, suffix = "") => {
    if (
      await action.run(() => request(method, bankPath(bank, `/operations/${encodeURIComponent(id)}${suffix}`))) !==
        undefined
    ) listing.reload()
  }

  return (
    <>
      <section class="card">
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            Status
            <select
              value={status}
              onChange={(e) => {
                setOffset(0)
                setStatus(e.currentTarget.value)
              }}
            >
              {["", "pending", "running", "completed", "failed", "cancelled"].map((s) => (
                <option value={s}>{s === "" ? "all" : s}</option>
              ))}
            </select>
          </label>
          <button type="button" onClick={listing.reload}>Refresh</button>
          <span class="muted" role="status">{anyActive ? "Live: refreshing while operations run" : ""}</span>
        </form>
        <ErrorBox error={action.error} />
        <Loaded resource={listing} what="Loading operations">
          {(data) => (
            <>
              <p class="muted">
                Worker: {data.worker["active"] ? "active" : "idle"} · circuit {String(data.worker["circuit_state"])}
                {data.worker["current_operation_id"]
                  ? ` · running ${short(String(data.worker["current_operation_id"]))}`
                  : ""}
              </p>
              <DataTable
                caption="Operations"
                rows={data.operations}
                empty={status
                  ? `No ${status} operation.`
                  : "No operation yet: background retains, consolidation and imports show here."}
                columns={[
                  {
                    label: "Operation",
                    render: (op) => (
                      <button
                        type="button"
                        class="link"
                        onClick={() => setSelected(op.id)}
                      >
                        <code>{short(op.id)}</code>
                      </button>
                    )
                  },
                  { label: "Task", render: (op) => op.task_type },
                  {
                    label: "Status",
                    render: (op) => <span class={`pill ${op.status}`} data-status={op.status}>{op.status}</span>
                  },
                  {
                    label: "Progress",
                    render: (op) => {
                      const detail = data.details.get(op.id)
                      if (!detail) return op.items_count > 0 ? `${op.items_count} items` : "—"
                      const p = detail.progress
                      return (
                        <span>
                          {p ? <progress max={p.total} value={p.done} aria-label={`${p.done} of ${p.total}`} /> : null}
                          {p ? ` ${p.done}/${p.total}` : ""} {detail.stage ?? ""}
                        </span>
                      )
                    }
                  },
                  { label: "Created", render: (op) => when(op.created_at) },
                  { label: "Error", render: (op) => op.error_message ?? "" },
                  {
                    label: "Actions",
                    render: (op) => (
                      <span class="row-actions">
                        {active(op.status) && (
                          <button
                            type="button"
                            onClick={() => act("DELETE", op.id)}
                            aria-label={`Cancel operation ${op.id}`}
                          >
                            Cancel
                          </button>
                        )}
                        {(op.status === "failed" || op.status === "cancelled") &&
                          (
                            <button
                              type="button"
                              onClick={() => act("POST", op.id, "/retry")}
                              aria-label={`Retry operation ${op.id}`}
                            >
                              Retry
                            </button>
                          )}
                      </span>
                    )
                  }
                ]}
              />
              <Pager offset={offset} total={data.total} size={pageSize} onChange={setOffset} />
            </>
          )}
        </Loaded>
      </section>
      {selected !== null && <OperationDetail bank={bank} id={selected} onClose={() => setSelected(null)} />}
    </>
  )
}

const OperationDetail = ({ bank, id, onClose }: { bank: string; id: string; onClose: () => void }) => {
  const detail = useResource(() => get(bankPath(bank, `/operations/${encodeURIComponent(id)}`)), [bank, id])
  const result = useResource(() => get(bankPath(bank, `/operations/${encodeURIComponent(id)}/result`)), [bank, id])
  return (
    <section class="card detail" aria-label="Operation detail">
      <div class="row-between">
        <h2>Operation {short(id)}</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <Loaded resource={detail}>{(d) => <JsonView value={d} label="Status" open />}</Loaded>
      <Loaded resource={result}>{(r) => <JsonView value={r} label="Result" />}</Loaded>
    </section>
  )
}

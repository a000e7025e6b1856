/** A bank's documents: search, page through, open one (its text, tags and memory count), delete it. */
import { useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView, when } from "../components/JsonView.tsx"
import { ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"
import { Pager } from "./MemoriesPage.tsx"

const pageSize = 20

export const DocumentsPage = ({ bank }: { bank: string }) => {
  const [q, setQ] = useState("")
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<string | null>(null)
  const documents = useResource(
    () =>
      get<{ items: Array<Record<string, any>>; total: number }>(bankPath(bank, "/documents"), {
        q,
        limit: pageSize,
        offset
      }),
    [bank, q, offset]
  )
  return (
    <>
      <section class="card">
        <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <label>
            Search{" "}
            <input
              type="search"
              value={q}
              onInput={(e) => {
                setOffset(0)
                setQ(e.currentTarget.value)
              }}
            />
          </label>
        </form>
        <Loaded resource={documents} what="Loading documents">
          {(page) => (
            <>
              <DataTable
                caption="Documents"
                rows={page.items}
                empty={q
                  ? "No document matches."
                  : "No document yet: retain content with a document id, or upload files."}
                columns={[
                  {
                    label: "Document",
                    render: (d) => (
                      <button
                        type="button"
                        class="link"
                        onClick={() => setSelected(d["id"])}
                      >
                        {d["id"]}
                      </button>
                    )
                  },
                  { label: "Memories", render: (d) => d["memory_unit_count"] ?? "—" },
                  { label: "Tags", render: (d) => (d["tags"] ?? []).join(", ") || "—" },
                  { label: "Created", render: (d) => when(d["created_at"]) }
                ]}
              />
              <Pager offset={offset} total={page.total} size={pageSize} onChange={setOffset} />
            </>
          )}
        </Loaded>
      </section>
      {selected !== null && (
        <DocumentDetail
          bank={bank}
          id={selected}
          onClose={() => setSelected(null)}
          onDeleted={() => {
            setSelected(null)
            documents.reload()
          }}
        />
      )}
    </>
  )
}

const DocumentDetail = (
  { bank, id, onClose, onDeleted }: { bank: string; id: string; onClose: () => void; onDeleted: () => void }
) => {
  const document = useResource(() => get(bankPath(bank, `/documents/${encodeURIComponent(id)}`)), [bank, id])
  const remove = useAction()
  return (
    <section class="card detail" aria-label="Document detail">
      <div class="row-between">
        <h2>Document {id}</h2>
        <div>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              if (!window.confirm(`Delete document “${id}” and its memories?`)) return
              if (
                await remove.run(() => request("DELETE", bankPath(bank, `/documents/${encodeURIComponent(id)}`))) !==
                  undefined
              ) onDeleted()
            }}
          >
            Delete
          </button>{" "}
          <button type="button" onClick={onClose}>Close</button>
        </div>
      </div>
      <ErrorBox error={remove.error} />
      <Loaded resource={document}>
        {(d: any) => (
          <>
            {typeof d.original_text === "string" && <pre class="document-text">{d.original_text}</pre>}
            <JsonView value={d} label="All fields" />
          </>
        )}
      </Loaded>
    </section>
  )
}

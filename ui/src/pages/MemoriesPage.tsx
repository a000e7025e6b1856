/**
 * A bank's memories: retain new content, search and filter by type and tags, page through, and open one memory
 * with its history, source facts, observations and graph links. The list endpoint has no tag filter, so a tag
 * filter reads the graph view's memory table (same memories, newest first) instead.
 */
import { useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView, short, when } from "../components/JsonView.tsx"
import { Empty, ErrorBox, Loaded } from "../components/States.tsx"
import { useAction, useResource } from "../hooks.ts"

export interface MemoryRow {
  id: string
  text: string
  type?: string
  fact_type?: string
  tags: Array<string>
  entities: Array<string>
  mentioned_at: string | null
}

const pageSize = 20
const types = ["", "world", "experience", "observation", "opinion"]

const loadPage = async (
  bank: string,
  filter: { type: string; q: string; tags: Array<string>; match: string },
  offset: number
) => {
  if (filter.tags.length === 0) {
    const page = await get<{ items: Array<MemoryRow>; total: number }>(bankPath(bank, "/memories/list"), {
      type: filter.type,
      q: filter.q,
      limit: pageSize,
      offset
    })
    return { rows: page.items, total: page.total }
  }
  const view = await get<{ nodes: Array<MemoryRow>; total_units: number }>(bankPath(bank, "/graph"), {
    type: filter.type,
    q: filter.q,
    tags: filter.tags,
    tags_match: filter.match,
    limit: offset + pageSize
  })
  return { rows: view.nodes.slice(offset, offset + pageSize), total: view.total_units }
}

export const MemoriesPage = ({ bank }: { bank: string }) => {
  const [filter, setFilter] = useState({ type: "", q: "", tags: [] as Array<string>, match: "any" })
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<string | null>(null)
  const [version, setVersion] = useState(0)
  const memories = useResource(() => loadPage(bank, filter, offset), [bank, filter, offset, version])
  const tags = useResource(() => get<{ items: Array<{ tag: string; count: number }> }>(bankPath(bank, "/tags")), [
    bank,
    version
  ])

  return (
    <>
      <RetainForm bank={bank} onRetained={() => setVersion((v) => v + 1)} />
      <section class="card">
        <h2>Memories</h2>
        <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <label>
            Search
            <input
              type="search"
              name="q"
              value={filter.q}
              onInput={(e) => {
                setOffset(0)
                setFilter({ ...filter, q: e.currentTarget.value })
              }}
            />
          </label>
          <label>
            Type
            <select
              name="type"
              value={filter.type}
              onChange={(e) => {
                setOffset(0)
                setFilter({ ...filter, type: e.currentTarget.value })
              }}
            >
              {types.map((type) => <option value={type}>{type === "" ? "all types" : type}</option>)}
            </select>
          </label>
          <label>
            Tags
            <select
              multiple
              name="tags"
              size={Math.min(4, Math.max(2, tags.data?.items.length ?? 2))}
              onChange={(e) => {
                setOffset(0)
                setFilter({ ...filter, tags: [...e.currentTarget.selectedOptions].map((option) => option.value) })
              }}
            >
              {tags.data?.items.map((tag) => (
                <option value={tag.tag} selected={filter.tags.includes(tag.tag)}>{tag.tag} ({tag.count})</option>
              ))}
            </select>
          </label>
          {filter.tags.length > 0 && (
            <label>
              Match
              <select value={filter.match} onChange={(e) => setFilter({ ...filter, match: e.currentTarget.value })}>
                {["any", "all", "any_strict", "all_strict"].map((match) => <option value={match}>{match}</option>)}
              </select>
            </label>
          )}
        </form>
        <Loaded resource={memories} what="Loading memories">
          {(page) => (
            <>
              <DataTable
                caption="Memories"
                rows={page.rows}
                empty={filter.q || filter.type || filter.tags.length
                  ? "No memory matches these filters."
                  : "No memory yet: retain some content above."}
                columns={[
                  {
                    label: "Text",
                    render: (m) => (
                      <button
                        type="button"
                        class="link text"
                        onClick={() => setSelected(m.id)}
                      >
                        {m.text}
                      </button>
                    )
                  },
                  {
                    label: "Type",
                    render: (m) => <span class={`pill ${m.fact_type ?? m.type}`}>{m.fact_type ?? m.type}</span>
                  },
                  { label: "Tags", render: (m) => m.tags.join(", ") || "—" },
                  { label: "Entities", render: (m) => m.entities.slice(0, 5).join(", ") || "—" },
                  { label: "Mentioned", render: (m) => when(m.mentioned_at) }
                ]}
              />
              <Pager offset={offset} total={page.total} size={pageSize} onChange={setOffset} />
            </>
          )}
        </Loaded>
      </section>
      {selected !== null && (
        <MemoryDetail
          bank={bank}
          id={selected}
          onClose={() => setSelected(null)}
          onOpen={setSelected}
        />
      )}
    </>
  )
}

export const Pager = (
  { offset, total, size, onChange }: { offset: number; total: number; size: number; onChange: (offset: number) => void }
) =>
  total <= size ? <p class="muted">{total} in all</p> : (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - size))}>
        Previous
      </button>
      <span>{offset + 1}–{Math.min(total, offset + size)} of {total}</span>
      <button type="button" disabled={offset + size >= total} onClick={() => onChange(offset + size)}>Next</button>
    </nav>
  )

const RetainForm = ({ bank, onRetained }: { bank: string; onRetained: () => void }) => {
  const [content, setContent] = useState("")
  const [tags, setTags] = useState("")
  const [background, setBackground] = useState(false)
  const [outcome, setOutcome] = useState<string | null>(null)
  const retain = useAction()
  return (
    <form
      class="card grid-form"
      aria-label="Retain"
      onSubmit={async (event) => {
        event.preventDefault()
        const tagList = tags.split(",").map((tag) => tag.trim()).filter((tag) => tag !== "")
        const result = await retain.run(() =>
          request("POST", bankPath(bank, "/memories"), {
            items: [{ content, ...(tagList.length ? { tags: tagList } : {}) }],
            async: background
          })
        )
        if (result !== undefined) {
          setOutcome(
            result.async
              ? `Queued as operation ${result.operation_id}.`
              : `Retained: ${result.memories_created ?? 0} memories created.`
          )
          setContent("")
          onRetained()
        }
      }}
    >
      <h2 class="wide">Retain</h2>
      <label class="wide">
        Content{" "}
        <textarea name="content" rows={3} required value={content} onInput={(e) => setContent(e.currentTarget.value)} />
      </label>
      <label>
        Tags (comma-separated) <input name="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      </label>
      <label class="inline">
        <input type="checkbox" checked={background} onChange={(e) => setBackground(e.currentTarget.checked)} />{" "}
        In the background (operation)
      </label>
      <div class="actions wide">
        <button type="submit" disabled={retain.busy}>{retain.busy ? "Retaining…" : "Retain"}</button>
        {outcome && <span role="status" class="ok">{outcome}</span>}
      </div>
      <div class="wide">
        <ErrorBox error={retain.error} />
      </div>
    </form>
  )
}

const MemoryDetail = (
  { bank, id, onClose, onOpen }: { bank: string; id: string; onClose: () => void; onOpen: (id: string) => void }
) => {
  const memory = useResource(() => get(bankPath(bank, `/memories/${encodeURIComponent(id)}`)), [bank, id])
  const history = useResource(() => get(bankPath(bank, `/memories/${encodeURIComponent(id)}/history`)), [bank, id])
  const links = useResource(
    () => get(bankPath(bank, "/graph/neighborhood"), { surface: "evidence", focus_ids: [id], window_days: 0 }),
    [bank, id]
  )
  return (
    <section class="card detail" aria-label="Memory detail">
      <div class="row-between">
        <h2>Memory {short(id)}</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <Loaded resource={memory}>
        {(m: any) => (
          <>
            <p class="memory-text">{m.text}</p>
            <dl class="facts">
              <dt>Type</dt>
              <dd>{m.fact_type}</dd>
              <dt>Entities</dt>
              <dd>{m.entities.join(", ") || "—"}</dd>
              <dt>Tags</dt>
              <dd>{m.tags.join(", ") || "—"}</dd>
              <dt>Occurred</dt>
              <dd>{when(m.occurred_start)} – {when(m.occurred_end)}</dd>
              <dt>Mentioned</dt>
              <dd>{when(m.mentioned_at)}</dd>
              <dt>Document</dt>
              <dd>{m.document_id ?? "—"}</dd>
              <dt>Superseded by</dt>
              <dd>
                {m.superseded_by
                  ? (
                    <button
                      type="button"
                      class="link"
                      onClick={() => onOpen(m.superseded_by)}
                    >
                      {short(m.superseded_by)}
                    </button>
                  )
                  : "—"}
              </dd>
            </dl>
            <JsonView value={m} label="All fields" />
          </>
        )}
      </Loaded>
      <h3>History</h3>
      <Loaded resource={history}>
        {(h: any) => (
          <>
            {h.history.length === 0
              ? <Empty>No change recorded.</Empty>
              : <JsonView value={h.history} label={`${h.history.length} changes`} open />}
            {h.source_facts.length > 0 && <MemoryList title="Source facts" items={h.source_facts} onOpen={onOpen} />}
            {h.observations.length > 0 && (
              <MemoryList title="Observations built on it" items={h.observations} onOpen={onOpen} />
            )}
          </>
        )}
      </Loaded>
      <h3>Links</h3>
      <Loaded resource={links}>
        {(n: any) => {
          const titles = new Map<string, string>(n.nodes.map((node: any) => [node.id, node.title]))
          const edges = n.edges.filter((edge: any) => edge.source_id === id || edge.target_id === id)
          return (
            <DataTable
              caption="Links"
              rows={edges}
              empty="No link to another memory."
              columns={[
                { label: "Relation", render: (e: any) => e.relation_type },
                { label: "Strength", render: (e: any) => e.strength.toFixed(2) },
                {
                  label: "Other memory",
                  render: (e: any) => {
                    const other = e.source_id === id ? e.target_id : e.source_id
                    return (
                      <button type="button" class="link" onClick={() => onOpen(other)}>
                        {titles.get(other) ?? short(other)}
                      </button>
                    )
                  }
                }
              ]}
            />
          )
        }}
      </Loaded>
    </section>
  )
}

const MemoryList = (
  { title, items, onOpen }: { title: string; items: Array<{ id: string; text: string }>; onOpen: (id: string) => void }
) => (
  <>
    <h4>{title}</h4>
    <ul class="plain">
      {items.map((item) => (
        <li>
          <button type="button" class="link text" onClick={() => onOpen(item.id)}>{item.text}</button>
        </li>
      ))}
    </ul>
  </>
)

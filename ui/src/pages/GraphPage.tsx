/**
 * The bank's graph with cytoscape.js: the evidence surface (memories and their links) or the state surface
 * (entities and topics, change events as pseudo-nodes). Clicking a node (or its button in the list, for the
 * keyboard) expands its neighbourhood and opens its panel: the memory, or the entity with its state and changes.
 */
import cytoscape from "cytoscape"
import { useEffect, useRef, useState } from "preact/hooks"
import { bankPath, get } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView, short, when } from "../components/JsonView.tsx"
import { Empty, ErrorBox, Loading } from "../components/States.tsx"
import { asApiError, useResource } from "../hooks.ts"
import type { ApiError } from "../api.ts"

interface GraphNode {
  id: string
  kind: string
  title: string
  subtitle: string
  preview_labels: Array<string>
  status_tone: string
  display_priority: number
  node_ref: string | null
  depth: number
}
interface GraphEdge {
  id: string
  source_id: string
  target_id: string
  relation_type: string
  strength: number
  evidence_count: number
}
interface Neighbourhood {
  nodes: Array<GraphNode>
  edges: Array<GraphEdge>
  total_nodes: number
  total_edges: number
  has_more: boolean
}

const tones: Record<string, string> = {
  stable: "#2f855a",
  changed: "#c05621",
  contradictory: "#c53030",
  stale: "#718096",
  neutral: "#3182ce"
}

export const GraphPage = ({ bank }: { bank: string }) => {
  const [surface, setSurface] = useState<"evidence" | "state">("evidence")
  const [windowDays, setWindowDays] = useState("0")
  const [nodes, setNodes] = useState(new Map<string, GraphNode>())
  const [edges, setEdges] = useState(new Map<string, GraphEdge>())
  const [selected, setSelected] = useState<string | null>(null)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const [totals, setTotals] = useState({ nodes: 0, edges: 0 })
  const container = useRef<HTMLDivElement>(null)
  const cy = useRef<cytoscape.Core | null>(null)
  const expandRef = useRef<(id: string) => void>(() => {})

  const load = async (focus: Array<string>, replace: boolean) => {
    setLoading(true)
    setError(undefined)
    try {
      const result = await get<Neighbourhood>(bankPath(bank, "/graph/neighborhood"), {
        surface,
        window_days: windowDays,
        ...(focus.length > 0 ? { focus_ids: focus } : {}),
        confidence_min: surface === "state" ? 0 : undefined
      })
      setNodes((previous) =>
        new Map([...(replace ? [] : previous), ...result.nodes.map((node) => [node.id, node] as const)])
      )
      setEdges((previous) =>
        new Map([...(replace ? [] : previous), ...result.edges.map((edge) => [edge.id, edge] as const)])
      )
      setTotals({ nodes: result.total_nodes, edges: result.total_edges })
    } catch (caught) {
      setError(asApiError(caught))
    } finally {
      setLoading(false)
    }
  }
  expandRef.current = (id: string) => {
    setSelected(id)
    void load([id], false)
  }

  useEffect(() => {
    setSelected(null)
    void load([], true)
  }, [bank, surface, windowDays])

  useEffect(() => {
    if (container.current === null) return
    const instance = cytoscape({
      container: container.current,
      wheelSensitivity: 0.3,
      // A handful of nodes would otherwise be fitted into giant discs.
      maxZoom: 1.6,
      style: [
        {
          selector: "node",
          style: {
            "background-color": "data(color)",
            label: "data(label)",
            "font-size": 9,
            "text-wrap": "ellipsis",
            "text-max-width": "110px",
            width: "data(size)",
            height: "data(size)",
            color: "#1a202c"
          }
        },
        { selector: "node.event", style: { shape: "diamond" } },
        { selector: "node:selected", style: { "border-width": 3, "border-color": "#1a202c" } },
        {
          selector: "edge",
          style: { width: "data(width)", "line-color": "#a0aec0", "curve-style": "bezier", opacity: 0.8 }
        }
      ]
    })
    instance.on("tap", "node", (event) => expandRef.current(event.target.id()))
    cy.current = instance
    return () => {
      instance.destroy()
      cy.current = null
    }
  }, [])

  useEffect(() => {
    const instance = cy.current
    if (instance === null) return
    const present = new Set(instance.nodes().map((node) => node.id()))
    const added = [...nodes.values()].filter((node) => !present.has(node.id))
    instance.batch(() => {
      if (present.size > 0 && nodes.size === 0) instance.elements().remove()
      for (const node of nodes.values()) {
        if (present.has(node.id)) continue
        instance.add({
          group: "nodes",
          data: {
            id: node.id,
            label: node.title,
            color: tones[node.status_tone] ?? tones["neutral"],
            size: 14 + Math.round(Math.min(1, node.display_priority) * 22)
          },
          classes: node.id.startsWith("event:") ? "event" : ""
        })
      }
      for (const edge of edges.values()) {
        if (instance.getElementById(edge.id).nonempty()) continue
        if (!nodes.has(edge.source_id) || !nodes.has(edge.target_id)) continue
        instance.add({
          group: "edges",
          data: { id: edge.id, source: edge.source_id, target: edge.target_id, width: 1 + edge.strength * 3 }
        })
      }
    })
    if (added.length > 0 || present.size === 0) {
      instance.layout({ name: "cose", animate: false, randomize: present.size === 0, fit: true, padding: 20 }).run()
    }
  }, [nodes, edges])

  useEffect(() => {
    const instance = cy.current
    if (instance === null) return
    instance.nodes().unselect()
    if (selected !== null) instance.getElementById(selected).select()
  }, [selected, nodes])

  const reset = () => {
    cy.current?.elements().remove()
    setNodes(new Map())
    setEdges(new Map())
  }

  return (
    <div class="graph-page">
      <form class="filters card" onSubmit={(e) => e.preventDefault()}>
        <fieldset>
          <legend>Surface</legend>
          {(["evidence", "state"] as const).map((name) => (
            <label class="inline">
              <input
                type="radio"
                name="surface"
                checked={surface === name}
                onChange={() => {
                  reset()
                  setSurface(name)
                }}
              />{" "}
              {name}
            </label>
          ))}
        </fieldset>
        <label>
          Window
          <select
            value={windowDays}
            onChange={(e) => {
              reset()
              setWindowDays(e.currentTarget.value)
            }}
          >
            <option value="0">all time</option>
            <option value="7">7 days</option>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
            <option value="365">1 year</option>
          </select>
        </label>
        <button
          type="button"
          onClick={() => {
            reset()
            void load([], true)
          }}
        >
          Reset view
        </button>
        <span class="muted" role="status" aria-live="polite">
          {loading
            ? "Loading…"
            : `${nodes.size} nodes, ${edges.size} edges shown (neighbourhood of ${totals.nodes} / ${totals.edges})`}
        </span>
      </form>
      <ErrorBox error={error} />
      <div class="graph-layout">
        <div
          class="graph-canvas card"
          ref={container}
          role="img"
          aria-label={`Graph of ${nodes.size} nodes; use the node list to expand with the keyboard`}
        />
        <aside class="graph-side card">
          {selected !== null
            ? (
              <NodePanel
                bank={bank}
                surface={surface}
                node={nodes.get(selected)}
                id={selected}
                edges={[...edges.values()]}
                nodes={nodes}
                onOpen={(id) => expandRef.current(id)}
              />
            )
            : <p class="muted">Click a node to expand its neighbourhood and see its details.</p>}
          <h3>Nodes</h3>
          {nodes.size === 0 && !loading
            ? (
              <Empty>
                {surface === "evidence"
                  ? "No memory in this window: retain some content first."
                  : "No entity or topic in this window."}
              </Empty>
            )
            : (
              <ul class="node-list">
                {[...nodes.values()].map((node) => (
                  <li>
                    <button
                      type="button"
                      class="link"
                      data-node-id={node.id}
                      aria-pressed={node.id === selected}
                      onClick={() => expandRef.current(node.id)}
                    >
                      {node.title}
                    </button>
                  </li>
                ))}
              </ul>
            )}
        </aside>
      </div>
      <Timeline bank={bank} />
    </div>
  )
}

const NodePanel = ({ bank, surface, node, id, edges, nodes, onOpen }: {
  bank: string
  surface: string
  node: GraphNode | undefined
  id: string
  edges: Array<GraphEdge>
  nodes: Map<string, GraphNode>
  onOpen: (id: string) => void
}) => {
  const linked = edges.filter((edge) => edge.source_id === id || edge.target_id === id)
  return (
    <section aria-label="Node panel" class="node-panel">
      <h2>{node?.title ?? short(id)}</h2>
      {node && <p class="muted">{node.subtitle}</p>}
      {surface === "evidence" && !id.startsWith("event:") && <MemoryPanel bank={bank} id={id} />}
      {surface === "state" && <StatePanel bank={bank} id={id} title={node?.title ?? ""} />}
      <h3>Links ({linked.length})</h3>
      <ul class="plain">
        {linked.map((edge) => {
          const other = edge.source_id === id ? edge.target_id : edge.source_id
          return (
            <li>
              {edge.relation_type} · {edge.strength.toFixed(2)} →{" "}
              <button type="button" class="link" onClick={() => onOpen(other)}>
                {nodes.get(other)?.title ?? short(other)}
              </button>
            </li>
          )
        })}
      </ul>
    </section>
  )
}

const MemoryPanel = ({ bank, id }: { bank: string; id: string }) => {
  const memory = useResource(() => get(bankPath(bank, `/memories/${encodeURIComponent(id)}`)), [bank, id])
  if (memory.loading) return <Loading />
  if (memory.error) return <ErrorBox error={memory.error} />
  const m = memory.data as any
  return (
    <>
      <p class="memory-text">{m.text}</p>
      <dl class="facts">
        <dt>Type</dt>
        <dd>{m.fact_type}</dd>
        <dt>Entities</dt>
        <dd>{m.entities.join(", ") || "—"}</dd>
        <dt>Occurred</dt>
        <dd>{when(m.occurred_start)}</dd>
      </dl>
    </>
  )
}

/** The entity or topic on the state surface: current state, status and why, change events, the entity's observations. */
const StatePanel = ({ bank, id, title }: { bank: string; id: string; title: string }) => {
  const intelligence = useResource(
    () => get(bankPath(bank, "/graph/intelligence"), { window_days: 0, confidence_min: 0, limit: 100 }),
    [bank]
  )
  const entities = useResource(
    () => get<{ items: Array<{ id: string; canonical_name: string }> }>(bankPath(bank, "/entities"), { limit: 1000 }),
    [bank]
  )
  const entityId = entities.data?.items.find((entity) => entity.canonical_name.toLowerCase() === title.toLowerCase())
    ?.id
  const entity = useResource(
    entityId === undefined ? null : () => get(bankPath(bank, `/entities/${encodeURIComponent(entityId)}`)),
    [bank, entityId]
  )
  const data = intelligence.data as any
  const state = data?.nodes.find((node: any) => node.id === id)
  const events = (data?.change_events ?? []).filter((event: any) => event.node_id === id || event.id === id)
  return (
    <>
      <ErrorBox error={intelligence.error} />
      {state && (
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <span class={`pill ${state.status}`}>{state.status}</span> {state.status_reason}
          </dd>
          <dt>Current state</dt>
          <dd>{state.current_state}</dd>
          <dt>Confidence</dt>
          <dd>{state.confidence}</dd>
          <dt>Evidence</dt>
          <dd>{state.evidence_count} memories</dd>
        </dl>
      )}
      <h3>Change events</h3>
      <DataTable
        caption="Change events"
        rows={events}
        empty="No change recorded."
        columns={[
          { label: "Change", render: (e: any) => e.change_type },
          { label: "Before", render: (e: any) => e.before_state ?? "—" },
          { label: "After", render: (e: any) => e.after_state ?? "—" },
          { label: "When", render: (e: any) => e.time_window ?? "—" }
        ]}
      />
      {entity.data !== undefined && (
        <>
          <h3>Entity</h3>
          <ul class="plain">{(entity.data as any).observations.map((o: any) => <li>{o.text}</li>)}</ul>
          <JsonView value={entity.data} label="Entity (all fields)" />
        </>
      )}
    </>
  )
}

const Timeline = ({ bank }: { bank: string }) => {
  const timeline = useResource(
    () => get<{ items: Array<any>; total_items: number }>(bankPath(bank, "/timeline"), { limit: 50 }),
    [bank]
  )
  return (
    <details class="card">
      <summary>Timeline (memories with a time)</summary>
      <ErrorBox error={timeline.error} />
      {timeline.data && (
        <DataTable
          caption="Timeline"
          rows={timeline.data.items}
          empty="No memory has a time."
          columns={[
            { label: "When", render: (m) => when(m.occurred_start ?? m.date) },
            { label: "Type", render: (m) => m.type },
            { label: "Memory", render: (m) => m.text }
          ]}
        />
      )}
    </details>
  )
}

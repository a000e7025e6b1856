/**
 * Read-only views of the other API areas: each lists what the API returns (the first list in the response as a
 * table, the other fields as a summary), and a row may open a second level (a webhook's deliveries, a repo's
 * branches, log and diff). Editing these from the UI is not built yet; codebase review has its own page
 * (CodebasesPage.tsx).
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { bankPath, get, request } from "../api.ts"
import { autoColumns, DataTable } from "../components/DataTable.tsx"
import { JsonView } from "../components/JsonView.tsx"
import { Loaded } from "../components/States.tsx"
import { useResource } from "../hooks.ts"

type Row = Record<string, unknown>

const firstList = (value: unknown): { rows: Array<Row>; rest: Row } => {
  if (Array.isArray(value)) return { rows: value as Array<Row>, rest: {} }
  const record = (value ?? {}) as Row
  const key = Object.keys(record).find((name) => Array.isArray(record[name]))
  if (key === undefined) return { rows: [], rest: record }
  const { [key]: rows, ...rest } = record
  return { rows: rows as Array<Row>, rest }
}

const Summary = ({ rest }: { rest: Row }) => {
  const scalars = Object.entries(rest).filter(([, value]) => value === null || typeof value !== "object")
  const nested = Object.entries(rest).filter(([, value]) => value !== null && typeof value === "object")
  if (scalars.length === 0 && nested.length === 0) return null
  return (
    <>
      {scalars.length > 0 && (
        <dl class="facts">
          {scalars.map(([name, value]) => (
            <>
              <dt>{name}</dt>
              <dd>{value === null ? "—" : String(value)}</dd>
            </>
          ))}
        </dl>
      )}
      {nested.map(([name, value]) => <JsonView value={value} label={name} />)}
    </>
  )
}

/** One API read: its list as a table (rows selectable when `onSelect` is given) and its other fields. */
export const Listing = ({ title, load, deps, empty, onSelect, idField = "id" }: {
  title: string
  load: () => Promise<unknown>
  deps: ReadonlyArray<unknown>
  empty: string
  onSelect?: (row: Row) => void
  idField?: string
}) => {
  const resource = useResource(load, deps)
  return (
    <section class="card" aria-label={title}>
      <h2>{title}</h2>
      <Loaded resource={resource}>
        {(data) => {
          const { rows, rest } = firstList(data)
          const columns = autoColumns(rows)
          return (
            <>
              <Summary rest={rest} />
              <DataTable
                caption={title}
                rows={rows}
                empty={empty}
                columns={onSelect === undefined ? columns : [
                  {
                    label: "",
                    render: (row: Row) => (
                      <button
                        type="button"
                        class="link"
                        onClick={() => onSelect(row)}
                      >
                        Open {String(row[idField] ?? "")}
                      </button>
                    )
                  },
                  ...columns
                ]}
              />
            </>
          )
        }}
      </Loaded>
    </section>
  )
}

/** A list whose rows open a second level below it. */
const WithDetail = ({ list, detail }: {
  list: (select: (row: Row) => void) => ComponentChildren
  detail: (row: Row) => ComponentChildren
}) => {
  const [selected, setSelected] = useState<Row | null>(null)
  return <>{list(setSelected)}{selected !== null && <div key={JSON.stringify(selected)}>{detail(selected)}</div>}</>
}

const enc = (value: unknown) => encodeURIComponent(String(value))

export interface ReadView {
  readonly page: string
  readonly title: string
  readonly render: (bank: string) => ComponentChildren
}

export const readViews: ReadonlyArray<ReadView> = [
  {
    page: "mental-models",
    title: "Mental models",
    render: (bank) => (
      <WithDetail
        list={(select) => (
          <Listing
            title="Mental models"
            load={() => get(bankPath(bank, "/mental-models"))}
            deps={[bank]}
            empty="No mental model."
            onSelect={select}
          />
        )}
        detail={(row) => (
          <Listing
            title={`History of ${String(row["name"] ?? row["id"])}`}
            load={() => get(bankPath(bank, `/mental-models/${enc(row["id"])}/history`))}
            deps={[bank, row["id"]]}
            empty="No refresh yet."
          />
        )}
      />
    )
  },
  {
    page: "directives",
    title: "Directives",
    render: (bank) => (
      <Listing
        title="Directives"
        load={() => get(bankPath(bank, "/directives"))}
        deps={[bank]}
        empty="No directive."
      />
    )
  },
  {
    page: "webhooks",
    title: "Webhooks",
    render: (bank) => (
      <WithDetail
        list={(select) => (
          <Listing
            title="Webhooks"
            load={() => get(bankPath(bank, "/webhooks"))}
            deps={[bank]}
            empty="No webhook."
            onSelect={select}
          />
        )}
        detail={(row) => (
          <Listing
            title="Deliveries"
            load={() => get(bankPath(bank, `/webhooks/${enc(row["id"])}/deliveries`))}
            deps={[bank, row["id"]]}
            empty="No delivery yet."
          />
        )}
      />
    )
  },
  {
    page: "llm-traces",
    title: "LLM traces",
    render: (bank) => (
      <>
        <Listing
          title="Token use (last 24 h)"
          load={() => get(bankPath(bank, "/llm-requests/stats"))}
          deps={[bank]}
          empty="No language-model call in the period."
        />
        <Listing
          title="LLM requests"
          load={() => get(bankPath(bank, "/llm-requests"))}
          deps={[bank]}
          empty="No language-model call recorded."
        />
      </>
    )
  },
  {
    page: "anomalies",
    title: "Anomalies",
    render: (bank) => (
      <Listing
        title="Anomaly events"
        load={() => request("POST", bankPath(bank, "/anomaly/intelligence"), { limit: 100 })}
        deps={[bank]}
        empty="No anomaly detected."
      />
    )
  },
  {
    page: "dreams",
    title: "Dreams",
    render: (bank) => (
      <>
        <Listing title="Dream statistics" load={() => get(bankPath(bank, "/dreams/stats"))} deps={[bank]} empty="" />
        <Listing title="Dreams" load={() => get(bankPath(bank, "/dreams"))} deps={[bank]} empty="No dream yet." />
      </>
    )
  },
  {
    page: "brain",
    title: "Brain status",
    render: (bank) => <Listing title="Brain" load={() => get(bankPath(bank, "/brain/status"))} deps={[bank]} empty="" />
  },
  {
    page: "datasets",
    title: "Datasets",
    render: (bank) => (
      <WithDetail
        list={(select) => (
          <Listing
            title="Datasets"
            load={() => get(bankPath(bank, "/forge/taste/datasets"))}
            deps={[bank]}
            empty="No dataset."
            onSelect={select}
          />
        )}
        detail={(row) => (
          <Listing
            title="Sets"
            load={() => get(bankPath(bank, `/forge/taste/datasets/${enc(row["id"])}/sets`))}
            deps={[bank, row["id"]]}
            empty="No set."
          />
        )}
      />
    )
  },
  {
    page: "repos",
    title: "Repos",
    render: (bank) => (
      <WithDetail
        list={(select) => (
          <>
            <Listing title="This bank's repo" load={() => get(bankPath(bank, "/repo"))} deps={[bank]} empty="" />
            <Listing
              title="Repos"
              load={() => get("/v1/default/repos")}
              deps={[]}
              empty="No repo: enable versioning on a bank first."
              onSelect={select}
            />
          </>
        )}
        detail={(row) => <RepoDetail id={String(row["id"])} />}
      />
    )
  }
]

const RepoDetail = ({ id }: { id: string }) => {
  const repo = `/v1/default/repos/${encodeURIComponent(id)}`
  return (
    <>
      <Listing title="Branches" load={() => get(`${repo}/branches`)} deps={[id]} empty="No branch." />
      <Listing title="Log" load={() => get(`${repo}/log`, { limit: 50 })} deps={[id]} empty="No commit." />
      <Listing
        title="Diff (working state against the last commit)"
        load={() => get(`${repo}/diff`)}
        deps={[id]}
        empty="No change."
      />
    </>
  )
}

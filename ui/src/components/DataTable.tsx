/**
 * A table for any list of records: the columns given, or every scalar field of the rows; nested values folded as
 * JSON. Read-only views of the later API areas (anomalies, dreams, repos, ...) are this table over the API's list.
 */
import type { ComponentChildren } from "preact"
import { Empty } from "./States.tsx"

export interface Column<A> {
  readonly label: string
  readonly render: (row: A) => ComponentChildren
}

const cell = (value: unknown): ComponentChildren => {
  if (value === null || value === undefined) return <span class="muted">—</span>
  if (typeof value === "object") {
    const text = JSON.stringify(value)
    return <code title={text}>{text.length > 80 ? `${text.slice(0, 80)}…` : text}</code>
  }
  const text = String(value)
  return text.length > 160 ? <span title={text}>{text.slice(0, 160)}…</span> : text
}

export const autoColumns = (
  rows: ReadonlyArray<Record<string, unknown>>,
  limit = 8
): Array<Column<Record<string, unknown>>> => {
  const names: Array<string> = []
  for (const row of rows.slice(0, 20)) {
    for (const name of Object.keys(row)) if (!names.includes(name)) names.push(name)
  }
  const scalarFirst = [...names].sort((a, b) => Number(isNested(rows, a)) - Number(isNested(rows, b)))
  return scalarFirst.slice(0, limit).map((name) => ({ label: name, render: (row) => cell(row[name]) }))
}

const isNested = (rows: ReadonlyArray<Record<string, unknown>>, name: string) =>
  rows.some((row) => row[name] !== null && typeof row[name] === "object")

export function DataTable<A>(
  { rows, columns, empty = "Nothing here yet.", caption }: {
    rows: ReadonlyArray<A>
    columns: ReadonlyArray<Column<A>>
    empty?: ComponentChildren
    caption?: string
  }
) {
  if (rows.length === 0) return <Empty>{empty}</Empty>
  return (
    <div class="table-wrap" tabIndex={0} aria-label={caption ?? "table"}>
      <table>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>{columns.map((column) => <th scope="col">{column.label}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row) => <tr>{columns.map((column) => <td>{column.render(row)}</td>)}</tr>)}
        </tbody>
      </table>
    </div>
  )
}

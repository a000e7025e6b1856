/** Any JSON value, readable and foldable; for fields the pages do not lay out themselves. */
export const JsonView = (
  { value, label = "JSON", open = false }: { value: unknown; label?: string; open?: boolean }
) => (
  <details class="json" open={open}>
    <summary>{label}</summary>
    <pre>{JSON.stringify(value, null, 2)}</pre>
  </details>
)

export const short = (id: string | null | undefined, length = 8) =>
  id === null || id === undefined ? "—" : id.length > length + 1 ? `${id.slice(0, length)}…` : id

export const when = (iso: string | null | undefined) =>
  iso === null || iso === undefined
    ? "—"
    : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })

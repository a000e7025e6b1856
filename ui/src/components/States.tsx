/** The three states every view has besides its data: loading, empty, and an API error with its detail. */
import type { ComponentChildren } from "preact"
import type { ApiError } from "../api.ts"

export const Loading = ({ what = "Loading" }: { what?: string }) => (
  <p class="state loading" role="status" aria-live="polite">{what}…</p>
)

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="state empty">{children}</p>

export const ErrorBox = ({ error, onRetry }: { error: ApiError | undefined; onRetry?: () => void }) =>
  error === undefined ? null : (
    <div class="error" role="alert">
      <strong>{error.status === 0 ? "Error" : `Error ${error.status}`}</strong>:{" "}
      <span class="detail">{error.detail}</span>
      {onRetry && <button type="button" class="link" onClick={onRetry}>Retry</button>}
    </div>
  )

/** Data once loaded; the loading line only on the first load, the error above stale data on a failed reload. */
export function Loaded<A>(
  { resource, children, what }: {
    resource: { data: A | undefined; loading: boolean; error: ApiError | undefined; reload: () => void }
    children: (data: A) => ComponentChildren
    what?: string
  }
) {
  return (
    <>
      <ErrorBox error={resource.error} onRetry={resource.reload} />
      {resource.data === undefined
        ? resource.loading ? <Loading {...(what === undefined ? {} : { what })} /> : null
        : children(resource.data)}
    </>
  )
}

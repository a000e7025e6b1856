/** Loading a resource into a page: data, loading flag, the API error, and a reload. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "./api.ts"

export interface Resource<A> {
  readonly data: A | undefined
  readonly loading: boolean
  readonly error: ApiError | undefined
  readonly reload: () => void
}

export const useResource = <A>(load: (() => Promise<A>) | null, deps: ReadonlyArray<unknown>): Resource<A> => {
  const [state, setState] = useState<{ data?: A; loading: boolean; error?: ApiError }>({ loading: load !== null })
  const [tick, setTick] = useState(0)
  const latest = useRef(0)
  useEffect(() => {
    if (load === null) return
    const id = ++latest.current
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (data) => id === latest.current && setState({ data, loading: false }),
      (error) => id === latest.current && setState({ loading: false, error: asApiError(error) })
    )
  }, [...deps, tick])
  const reload = useCallback(() => setTick((value) => value + 1), [])
  return { data: state.data, loading: state.loading, error: state.error, reload }
}

export const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, error instanceof Error ? error.message : String(error))

/** Runs an action (a POST, a DELETE) with its own busy flag and error. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const run = useCallback(async <A>(action: () => Promise<A>): Promise<A | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await action()
    } catch (caught) {
      setError(asApiError(caught))
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run, clearError: () => setError(undefined) }
}

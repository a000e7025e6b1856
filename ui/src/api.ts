/**
 * The one way the page talks to engram: same-origin fetch with the API key from session storage as a Bearer
 * token. Every failure becomes an ApiError carrying the API's `detail`, so pages show the server's own words.
 */
const keyStorage = "engram.apiKey"

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(keyStorage),
  set: (key: string) => sessionStorage.setItem(keyStorage, key),
  clear: () => sessionStorage.removeItem(keyStorage)
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly detail: string) {
    super(detail)
  }
}

/** Listeners told when a request was refused for want of a key, so the shell can show the key prompt. */
const unauthorizedListeners = new Set<() => void>()
export const onUnauthorized = (listener: () => void) => {
  unauthorizedListeners.add(listener)
  return () => unauthorizedListeners.delete(listener)
}

export type Query = Record<string, string | number | boolean | ReadonlyArray<string> | null | undefined>

export const withQuery = (path: string, query: Query = {}): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue
    if (Array.isArray(value)) value.forEach((item) => params.append(name, item))
    else params.set(name, String(value))
  }
  const text = params.toString()
  return text === "" ? path : `${path}?${text}`
}

export const request = async <A = any>(method: string, path: string, body?: unknown): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  const key = apiKey.get()
  if (key) headers["authorization"] = `Bearer ${key}`
  if (body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  } catch (error) {
    throw new ApiError(0, `the server could not be reached (${(error as Error).message})`)
  }
  const text = await response.text()
  let parsed: any = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!response.ok) {
    if (response.status === 401) unauthorizedListeners.forEach((listener) => listener())
    const detail = typeof parsed?.detail === "string" ? parsed.detail : text.slice(0, 300) || response.statusText
    throw new ApiError(response.status, detail)
  }
  return parsed as A
}

export const get = <A = any>(path: string, query?: Query) => request<A>("GET", withQuery(path, query))

/** `/v1/default/banks/{bank}` with the id encoded. */
export const bankPath = (bank: string, rest = "") => `/v1/default/banks/${encodeURIComponent(bank)}${rest}`

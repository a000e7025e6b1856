/**
 * Client-side routes under /ui (the server answers every extension-less /ui path with the page): a tiny router on
 * the History API, because the page has a handful of flat routes and needs nothing more.
 */
import { useEffect, useState } from "preact/hooks"

export const base = "/ui"

export interface Route {
  /** "banks" for the bank list, otherwise a bank page ("recall", "graph", ...). */
  readonly page: string
  readonly bank: string | null
  readonly params: URLSearchParams
}

export const parseRoute = (location: Location): Route => {
  const parts = location.pathname.replace(/^\/ui\/?/, "").split("/").filter((part) => part !== "").map(
    decodeURIComponent
  )
  const params = new URLSearchParams(location.search)
  if (parts[0] === "banks" && parts[1] !== undefined) return { page: parts[2] ?? "memories", bank: parts[1], params }
  return { page: "banks", bank: null, params }
}

export const hrefOf = (bank: string | null, page: string, query: Record<string, string> = {}) => {
  const search = new URLSearchParams(query).toString()
  const path = bank === null ? `${base}/` : `${base}/banks/${encodeURIComponent(bank)}/${page}`
  return search === "" ? path : `${path}?${search}`
}

const listeners = new Set<() => void>()

export const navigate = (href: string) => {
  history.pushState(null, "", href)
  listeners.forEach((listener) => listener())
}

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(window.location))
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location))
    listeners.add(update)
    window.addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      window.removeEventListener("popstate", update)
    }
  }, [])
  return route
}

/** A same-page link: a real <a href> (open in a new tab works), navigated without a reload. */
export const linkHandler = (event: MouseEvent) => {
  const anchor = event.currentTarget as HTMLAnchorElement
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(anchor.getAttribute("href") ?? base)
}

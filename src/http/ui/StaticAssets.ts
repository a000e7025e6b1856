/**
 * Which file of the built web UI answers a path under /ui, and with which content type. Pure: no file is read
 * here. A path that tries to leave the build directory resolves to nothing, never to a file outside it.
 */
import { extname, join, normalize, sep } from "node:path"

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

export const contentTypeOf = (file: string): string =>
  contentTypes[extname(file).toLowerCase()] ?? "application/octet-stream"

export type AssetTarget =
  /** A file that must exist (it has an extension): a missing one is a 404. */
  | { readonly _tag: "File"; readonly path: string; readonly immutable: boolean }
  /** A client-side route (no extension): the single page answers it. */
  | { readonly _tag: "Page" }
  | { readonly _tag: "Invalid"; readonly reason: string }

/**
 * Maps a request path (`/ui`, `/ui/`, `/ui/banks/x`, `/ui/assets/index-3f2a.js`) to its target inside `root`.
 * Vite names the files under `assets/` by content hash, so those may be cached for good.
 */
export const resolveAsset = (root: string, requestPath: string): AssetTarget => {
  let relative: string
  try {
    relative = decodeURIComponent(requestPath.replace(/^\/ui(\/|$)/, ""))
  } catch {
    return { _tag: "Invalid", reason: "the path is not valid percent-encoding" }
  }
  if (relative.includes("\0")) return { _tag: "Invalid", reason: "the path contains a NUL character" }
  if (relative === "" || extname(relative) === "") return { _tag: "Page" }
  const path = normalize(join(root, relative))
  if (!path.startsWith(root.endsWith(sep) ? root : root + sep)) {
    return { _tag: "Invalid", reason: "the path leaves the UI directory" }
  }
  return { _tag: "File", path, immutable: relative.startsWith("assets/") }
}

/**
 * Which archive entries a snapshot looks at: a single top-level folder shared by every entry is dropped (git
 * host zipballs wrap the tree in `owner-repo-sha/`), then only entries under `root_path` are kept (relative to
 * it), then `include_globs` (all when empty) and `exclude_globs` apply, fnmatch-style (`*` crosses `/`).
 */
import type { ArchiveEntry } from "./ZipReader.ts"

export interface Selection {
  readonly rootPath: string | null
  readonly includeGlobs: ReadonlyArray<string>
  readonly excludeGlobs: ReadonlyArray<string>
}

const globCache = new Map<string, RegExp>()
export const globToRegExp = (glob: string): RegExp => {
  let cached = globCache.get(glob)
  if (cached === undefined) {
    let pattern = ""
    for (const char of glob) {
      pattern += char === "*" ? ".*" : char === "?" ? "." : /[.+^${}()|[\]\\]/.test(char) ? `\\${char}` : char
    }
    cached = new RegExp(`^${pattern}$`)
    globCache.set(glob, cached)
  }
  return cached
}

const matchesAny = (path: string, globs: ReadonlyArray<string>) => globs.some((glob) => globToRegExp(glob).test(path))

export const selectEntries = (entries: ReadonlyArray<ArchiveEntry>, selection: Selection): Array<ArchiveEntry> => {
  let current = [...entries]
  const tops = new Set(current.map((entry) => entry.path.split("/")[0]))
  if (tops.size === 1 && current.every((entry) => entry.path.includes("/"))) {
    current = current.map((entry) => ({ path: entry.path.slice(entry.path.indexOf("/") + 1), bytes: entry.bytes }))
  }
  const root = (selection.rootPath ?? "").replace(/^\/+|\/+$/g, "")
  if (root !== "") {
    current = current
      .filter((entry) => entry.path.startsWith(`${root}/`))
      .map((entry) => ({ path: entry.path.slice(root.length + 1), bytes: entry.bytes }))
  }
  return current
    .filter((entry) => selection.includeGlobs.length === 0 || matchesAny(entry.path, selection.includeGlobs))
    .filter((entry) => !matchesAny(entry.path, selection.excludeGlobs))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

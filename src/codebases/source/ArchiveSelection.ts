/**
 * Which archive entries a snapshot looks at: a single top-level folder shared by every entry is dropped (git
 * host zipballs wrap the tree in `owner-repo-sha/`), then only entries under `root_path` are kept (relative to
 * it), then `include_globs` (all when empty) and `exclude_globs` apply, fnmatch-style (`*` crosses `/`; see
 * `Globs.ts`). Matching runs in slices that give the event loop a turn, and a selection whose matching takes longer
 * than `matchBudget` is refused: even linear matching costs paths × globs × their lengths.
 */
import { Clock, Duration, Effect } from "effect"
import { type CompiledGlob, compileGlobs } from "./Globs.ts"
import { type ArchiveEntry, ArchiveRefused } from "../../archives/ZipReader.ts"

export interface Selection {
  readonly rootPath: string | null
  readonly includeGlobs: ReadonlyArray<string>
  readonly excludeGlobs: ReadonlyArray<string>
}

/** Path × glob tests between two turns of the event loop, and the longest a whole selection may match for. */
const testsPerSlice = 2_000
const matchBudget = Duration.seconds(3)

const matchesAny = (path: string, globs: ReadonlyArray<CompiledGlob>) => globs.some((glob) => glob.matches(path))

export const selectEntries = Effect.fn("ArchiveSelection.selectEntries")(function*(
  entries: ReadonlyArray<ArchiveEntry>,
  selection: Selection
) {
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
  const include = compileGlobs(selection.includeGlobs)
  const exclude = compileGlobs(selection.excludeGlobs)
  const perEntry = Math.max(1, include.length + exclude.length)
  const started = yield* Clock.currentTimeMillis
  const selected: Array<ArchiveEntry> = []
  for (let i = 0; i < current.length; i++) {
    if ((i * perEntry) % testsPerSlice < perEntry && i > 0) {
      yield* Effect.yieldNow
      if ((yield* Clock.currentTimeMillis) - started > Duration.toMillis(matchBudget)) {
        return yield* new ArchiveRefused({
          reason: "globs_too_costly",
          message: `matching the include and exclude globs against the archive took longer than ${
            Duration.format(matchBudget)
          }; use fewer or simpler globs`
        })
      }
    }
    const entry = current[i]!
    if ((include.length === 0 || matchesAny(entry.path, include)) && !matchesAny(entry.path, exclude)) {
      selected.push(entry)
    }
  }
  return selected.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
})

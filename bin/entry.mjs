// Which program `engram` (and `npm start`) runs. The packed package ships only the compiled `dist/`. A checkout has
// the TypeScript sources, which Node 24 runs directly by stripping their types, and usually `dist/` too: `npm install`
// compiles it (bin/build-dist.mjs). The compiled program is the same code without the type stripper: Node loads its
// WebAssembly and keeps it, with its JavaScript and memory, for the life of the process (17 MiB of a fresh server's
// 325, `node bench/memory.ts`). It is run only while it is current: compiled from sources none of which changed since,
// so an edited, pulled or checked-out file runs from its source until the next build.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

/** Written by bin/build-dist.mjs, its time set to when that build began reading the sources. */
export const builtStamp = (root) => join(root, "dist", ".built-from-sources")

/** The TypeScript sources the compiled program is made of. */
const sourceFolders = ["src", "layers"]

/** The newest modification time (ms) of a `.ts` file under the source folders, or 0 when there is none. */
export const newestSource = (root) => {
  let newest = 0
  for (const folder of sourceFolders) {
    const base = join(root, folder)
    if (!existsSync(base)) continue
    for (const entry of readdirSync(base, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue
      newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs)
    }
  }
  return newest
}

/**
 * The entry to run: `{ path, compiled, stale }`. Compiled when there are no sources (a packed package) or when
 * `dist/` was built from the sources as they are; `stale` when a compiled program exists but sources changed since.
 */
export const chooseEntry = (root, relative) => {
  const sources = programPath(root, relative, false)
  const compiled = programPath(root, relative, true)
  if (!existsSync(sources)) return { path: compiled, compiled: true, stale: false }
  if (!existsSync(compiled) || !existsSync(builtStamp(root))) return { path: sources, compiled: false, stale: false }
  const current = statSync(builtStamp(root)).mtimeMs >= newestSource(root)
  return current ? { path: compiled, compiled: true, stale: false } : { path: sources, compiled: false, stale: true }
}

/** The program `relative` to `src/` (no extension): its compiled copy in dist/, or its TypeScript source. */
export const programPath = (root, relative, compiled) =>
  compiled
    ? join(root, "dist", "src", ...relative.split("/")) + ".js"
    : join(root, "src", ...relative.split("/")) + ".ts"

/**
 * The program for these command-line arguments, relative to `src/` without extension. `serve` alone (what `npm start`
 * runs) starts the service's own entry, `src/main.ts`, which is the same program without the command line's modules;
 * anything else goes to the command line, `src/cli/main.ts`, with the arguments as given.
 */
export const programFor = (args) =>
  args.length === 1 && args[0] === "serve" ? { program: "main", args: [] } : { program: "cli/main", args }

#!/usr/bin/env node
// Launches the engram CLI (src/cli/main.ts). The CLI is TypeScript run directly by Node >= 24 (type stripping, no
// build step); when this launcher is started by an older Node (e.g. the system's), it re-runs itself on the
// project's own Node 24 from the `node` package. `engram serve` runs with the V8 flags `npm start` passes.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
// A checkout runs the sources; the packed package (`npm pack`) ships only the compiled `dist/` (any Node >= 22.19).
const sources = join(root, "src", "cli", "main.ts")
const entry = existsSync(sources) ? sources : join(root, "dist", "src", "cli", "main.js")
const major = Number(process.versions.node.split(".")[0])
const args = process.argv.slice(2)

// The server's young generation at most 2 x 16 MiB, as `npm start` runs it: left to grow it reached 128 MiB and
// stayed, and a fresh server held 85-130 MiB more; 1-4 MiB promoted too much under load. A size set on the command
// line or in NODE_OPTIONS wins. V8 sizes its heap when the process starts, so the flag needs a process of its own.
const serverFlags = args.includes("serve") && ![...process.execArgv, process.env.NODE_OPTIONS ?? ""]
    .some((flag) => flag.includes("--max-semi-space-size"))
  ? ["--max-semi-space-size=16"]
  : []

if (major >= 24 || entry !== sources) {
  // The same process becomes the server (same pid, same signals) where the platform can; elsewhere it runs as is.
  if (serverFlags.length > 0 && typeof process.execve === "function") {
    process.execve(process.execPath, [process.execPath, ...serverFlags, entry, ...args], process.env)
  }
  await import(entry)
} else {
  const projectNode = join(root, "node_modules", "node", "bin", "node")
  if (!existsSync(projectNode)) {
    console.error(`engram needs Node 24 or later (this is ${process.version}); run \`npm install\` in ${root}`)
    process.exit(1)
  }
  const result = spawnSync(projectNode, [...serverFlags, entry, ...args], { stdio: "inherit" })
  if (result.signal) process.kill(process.pid, result.signal)
  process.exit(result.status ?? 1)
}

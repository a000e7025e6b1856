#!/usr/bin/env node
// Launches the engram CLI (src/cli/main.ts). The CLI is TypeScript run directly by Node >= 24 (type stripping, no
// build step); when this launcher is started by an older Node (e.g. the system's), it re-runs itself on the
// project's own Node 24 from the `node` package.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const entry = join(root, "src", "cli", "main.ts")
const major = Number(process.versions.node.split(".")[0])

if (major >= 24) {
  await import(entry)
} else {
  const projectNode = join(root, "node_modules", "node", "bin", "node")
  if (!existsSync(projectNode)) {
    console.error(`engram needs Node 24 or later (this is ${process.version}); run \`npm install\` in ${root}`)
    process.exit(1)
  }
  const result = spawnSync(projectNode, [entry, ...process.argv.slice(2)], { stdio: "inherit" })
  if (result.signal) process.kill(process.pid, result.signal)
  process.exit(result.status ?? 1)
}

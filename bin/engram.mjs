#!/usr/bin/env node
// Launches the engram CLI (src/cli/main.ts): compiled from dist/ when that is current, else the TypeScript sources,
// which Node >= 24 runs directly (bin/entry.mjs says which and why). When this launcher is started by an older Node
// (e.g. the system's) in a checkout, it re-runs the program on the project's own Node 24 from the `node` package.
// `engram serve` (and `npm start`, which runs it) gets the server's process settings (bin/server-settings.mjs).
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { chooseEntry, programFor, programPath } from "./entry.mjs"
import { serverSettings } from "./server-settings.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
const serving = args.includes("serve")
const { args: programArgs, program } = programFor(args)
const chosen = chooseEntry(root, program)
const entry = chosen.path
const checkout = existsSync(join(root, "src"))
const major = Number(process.versions.node.split(".")[0])
const settings = serving
  ? serverSettings(process.execArgv, process.env, process.platform)
  : { flags: [], env: process.env, changed: false }
if (chosen.stale && serving) {
  console.error("engram: running the TypeScript sources: they changed since dist/ was compiled (`npm run build:dist`)")
}

if (major >= 24 || !checkout) {
  // The same process becomes the server (same pid, same signals) where the platform can; elsewhere it runs as is.
  // V8's heap sizes and glibc's malloc read their settings when a process starts, so they need a process of their own.
  if (settings.changed && typeof process.execve === "function") {
    process.execve(
      process.execPath,
      [process.execPath, ...process.execArgv, ...settings.flags, entry, ...programArgs],
      settings.env
    )
  }
  // In this process: the command line's entry (compiled or not as chosen), which runs `serve` in-process too
  // (src/main.ts runs only as the entry of a process of its own).
  await import(program === "main" ? programPath(root, "cli/main", chosen.compiled) : entry)
} else {
  const projectNode = join(root, "node_modules", "node", "bin", "node")
  if (!existsSync(projectNode)) {
    console.error(`engram needs Node 24 or later (this is ${process.version}); run \`npm install\` in ${root}`)
    process.exit(1)
  }
  const result = spawnSync(projectNode, [...process.execArgv, ...settings.flags, entry, ...programArgs], {
    stdio: "inherit",
    env: settings.env
  })
  if (result.signal) process.kill(process.pid, result.signal)
  process.exit(result.status ?? 1)
}

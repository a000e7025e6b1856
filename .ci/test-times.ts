/**
 * Where a test run's time went: reads vitest's default-reporter output (`.ci/run` keeps it in
 * /tmp/engram-vitest-output.log) and prints each project's file count and summed file time, then the slowest files
 * with their time on each tier. Only reads a log; it runs nothing.
 *
 *   node .ci/test-times.ts [log=/tmp/engram-vitest-output.log] [top=25]
 */
import { readFileSync } from "node:fs"

const log = process.argv[2] ?? "/tmp/engram-vitest-output.log"
const top = Number(process.argv[3] ?? 25)

// " ✓  pglite  test/a.test.ts (3 tests) 1234ms": the mark, the project, the file, its test count and its time.
const line = /^\s*[✓❯×↓]\s+(\S+)\s+(test\/\S+\.test\.ts)\s+\((\d+) tests?[^)]*\)\s+(\d+)ms\s*$/
const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const files = new Map<string, Map<string, number>>()
const projects = new Map<string, { files: number; ms: number }>()
for (const raw of readFileSync(log, "utf8").split("\n")) {
  const match = line.exec(strip(raw))
  if (match === null) continue
  const [, project, file, , ms] = match as unknown as [string, string, string, string, string]
  const tier = project.replace(/-isolated$/, "")
  const byTier = files.get(file) ?? new Map<string, number>()
  byTier.set(tier, (byTier.get(tier) ?? 0) + Number(ms))
  files.set(file, byTier)
  const sum = projects.get(project) ?? { files: 0, ms: 0 }
  projects.set(project, { files: sum.files + 1, ms: sum.ms + Number(ms) })
}

const seconds = (ms: number | undefined) => ms === undefined ? "–" : (ms / 1000).toFixed(0)
console.log("| project | files | summed file time (s) |\n|---|---:|---:|")
for (const [project, sum] of projects) console.log(`| ${project} | ${sum.files} | ${seconds(sum.ms)} |`)
console.log("\n| file | PGlite (s) | PostgreSQL (s) | both (s) |\n|---|---:|---:|---:|")
const total = (byTier: Map<string, number>) => [...byTier.values()].reduce((a, b) => a + b, 0)
for (const [file, byTier] of [...files].sort((a, b) => total(b[1]) - total(a[1])).slice(0, top)) {
  console.log(
    `| ${file} | ${seconds(byTier.get("pglite"))} | ${seconds(byTier.get("postgres"))} | ${seconds(total(byTier))} |`
  )
}

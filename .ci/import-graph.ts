/**
 * The import graph's rules (README, "Layers"), checked by `npm run check`:
 * - below the entry points (`src/main.ts`, `src/index.ts`, `src/cli/`), nothing in `src/` imports from `layers/`:
 *   `src/` holds the domain and its services, `layers/` the implementations that wire them to a platform;
 * - no import cycle between files of `src/` and `layers/` (type-only imports included: a cycle of types is a knot to
 *   a reader all the same).
 * Prints each violation and exits 1 when there is one. `--summary` also prints the folder graph's size.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const roots = ["src", "layers"]
const entryPoints = [/^src\/main\.ts$/, /^src\/index\.ts$/, /^src\/cli\//]

const files = (directory: string): Array<string> =>
  readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    if (statSync(path).isDirectory()) return files(path)
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : []
  })

const specifiers =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g

const importsOf = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const found: Array<string> = []
  for (const match of text.matchAll(specifiers)) {
    const specifier = match[1] ?? match[2] ?? match[3]
    if (specifier === undefined || !specifier.startsWith(".")) continue
    const target = relative(root, resolve(dirname(file), specifier))
    found.push(target)
  }
  return found
}

const all = roots.flatMap((name) => files(join(root, name))).map((file) => relative(root, file))
const known = new Set(all)
const edges = new Map(all.map((file) => [file, importsOf(join(root, file)).filter((target) => known.has(target))]))

const problems: Array<string> = []
for (const [file, targets] of edges) {
  if (!file.startsWith("src/") || entryPoints.some((entry) => entry.test(file))) continue
  for (const target of targets) {
    if (target.startsWith("layers/")) problems.push(`${file} imports ${target}: src/ does not import layers/`)
  }
}

// Tarjan's strongly connected components: each component of more than one file is a cycle.
let counter = 0
const index = new Map<string, number>()
const low = new Map<string, number>()
const stack: Array<string> = []
const onStack = new Set<string>()
const cycles: Array<Array<string>> = []
const visit = (file: string) => {
  index.set(file, counter)
  low.set(file, counter++)
  stack.push(file)
  onStack.add(file)
  for (const target of edges.get(file) ?? []) {
    if (!index.has(target)) {
      visit(target)
      low.set(file, Math.min(low.get(file)!, low.get(target)!))
    } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!))
  }
  if (low.get(file) === index.get(file)) {
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1) cycles.push(component.sort())
  }
}
for (const file of all) if (!index.has(file)) visit(file)
for (const cycle of cycles) problems.push(`import cycle: ${cycle.join(" ⇄ ")}`)

if (process.argv.includes("--summary")) {
  const folderOf = (file: string) => dirname(file)
  const folderEdges = new Set(
    [...edges].flatMap(([file, targets]) =>
      targets.map((target) => `${folderOf(file)} → ${folderOf(target)}`).filter((edge) => !/^(.*) → \1$/.test(edge))
    )
  )
  console.log(
    `${all.length} files, ${new Set(all.map(folderOf)).size} folders, ${folderEdges.size} arrows between folders`
  )
}
for (const problem of problems) console.error(problem)
if (problems.length > 0) {
  console.error(`${problems.length} import rule(s) broken (see .ci/import-graph.ts)`)
  process.exit(1)
}

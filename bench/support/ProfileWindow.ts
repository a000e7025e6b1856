/**
 * What a server spent in one window of a bench: reads a `.cpuprofile` written by `node --cpu-prof` (the main thread)
 * and sums the samples between two points of the monotonic clock (µs, as `bench/isolation.ts` logs each window) by
 * category (extraction, HTTP, JSON, SQL client, GC, idle, ...) and by function. Read-only; it never runs the server.
 * Run: `node bench/support/ProfileWindow.ts <file.cpuprofile> <from µs> <to µs> [top] [category]` (with a category, the
 * top functions are those of its samples only).
 */
import { readFileSync } from "node:fs"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly parent?: number
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, fromArg, toArg, topArg] = process.argv.slice(2)
if (file === undefined || fromArg === undefined || toArg === undefined) {
  console.error("usage: node bench/support/ProfileWindow.ts <file.cpuprofile> <from µs> <to µs> [top]")
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
const from = Number(fromArg)
const to = Number(toArg)
const top = Number(topArg ?? 25)
const only = process.argv[6]

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parentOf = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)

/** The first rule that matches any frame of the stack, innermost first, names the sample's category. */
const rules: ReadonlyArray<readonly [string, (frame: CallFrame) => boolean]> = [
  ["(garbage collector)", (f) => f.functionName === "(garbage collector)"],
  ["(idle)", (f) => f.functionName === "(idle)"],
  ["(program)", (f) => f.functionName === "(program)"],
  [
    "retain extraction (NLP)",
    (f) => /wink|compromise|chrono-node|OfflineExtractor|EntityMentions|TimeExpressions/.test(f.url)
  ],
  ["ANN index build (HNSW)", (f) => /HnswIndex/.test(f.url)],
  ["token counting (gpt-tokenizer)", (f) => /gpt-tokenizer|retain\/Tokens/.test(f.url)],
  ["embeddings (GloVe)", (f) => /embeddings|Glove/i.test(f.url)],
  ["request body caps (scan, hygiene)", (f) => /JsonShape|TextHygiene|StorableText/.test(f.url)],
  ["retain (other)", (f) => /memory\/retain/.test(f.url)],
  ["recall and brain (in memory)", (f) => /src\/brain|memory\/recall/.test(f.url)],
  ["SQL client, PGlite messages", (f) => /pglite|sql-pglite|@effect\/sql|src\/storage/.test(f.url)],
  ["JSON parse / stringify", (f) => f.functionName === "parse" || f.functionName === "stringify"],
  [
    "HTTP (node, platform-node, router, encoding)",
    (f) => /node:_http|node:net|node:stream|platform-node|effect\/dist\/http|src\/http|layers\/http/.test(f.url)
  ],
  ["effect runtime", (f) => /node_modules\/effect\//.test(f.url)]
]

const categoryOf = (leaf: number) => {
  const stack: Array<CallFrame> = []
  for (let id: number | undefined = leaf; id !== undefined; id = parentOf.get(id)) stack.push(byId.get(id)!.callFrame)
  for (const [name, test] of rules) if (stack.some(test)) return name
  return "other"
}

const categories = new Map<string, number>()
const functions = new Map<string, number>()
let total = 0
let time = profile.startTime
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i]!
  const next = profile.timeDeltas[i + 1] ?? 0
  if (time < from || time > to) continue
  const id = profile.samples[i]!
  const frame = byId.get(id)!.callFrame
  const category = categoryOf(id)
  categories.set(category, (categories.get(category) ?? 0) + next)
  total += next
  if (only !== undefined && !category.includes(only)) continue
  const where = `${frame.functionName || "(anonymous)"} ${
    frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|layers)\//, "$1/")
  }:${frame.lineNumber + 1}`
  functions.set(where, (functions.get(where) ?? 0) + next)
}

const ms = (us: number) => (us / 1000).toFixed(0).padStart(7)
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`
console.log(`window ${((to - from) / 1e6).toFixed(1)} s, sampled ${(total / 1e6).toFixed(1)} s of the profiled thread`)
console.log("\nby category (innermost matching frame of each sample's stack):")
for (const [name, us] of [...categories].sort((a, b) => b[1] - a[1])) console.log(`${ms(us)} ms ${pct(us)}  ${name}`)
console.log(`\ntop ${top} functions by self time${only === undefined ? "" : ` in "${only}"`}:`)
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${ms(us)} ms ${pct(us)}  ${name}`)
}

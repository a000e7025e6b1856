/**
 * Spreading activation on synthetic bank graphs of 10k, 100k and 1M links (twice as many directed edges; one
 * memory per 5 links, conversations of 40 memories plus power-law entity hubs, seeded RNG): snapshot build time,
 * then 400 queries of 3 random seeds each (hops 3, default fan-out and threshold), whole result ranked and top 100,
 * best of 5 interleaved rounds after a warm-up. Baseline in the same run: a plain breadth-first walk over the same
 * CSR arrays with the same hop and fan-out bounds (edges scanned, no arithmetic); a naive Map-of-arrays version
 * of the same spreading is shown too, and the top-100 query on the same graph held as a brain holds it after some writes
 * (a `LiveGraph`: the newest 3 % of memories appended to a base of the others). Rerun: `node bench/spreading-activation.ts [links...]`.
 */
import type { GraphSnapshot, IndexedLinkRow, LinkRow } from "../src/brain/graph/GraphSnapshot.ts"
import { GraphSnapshot as Snapshot } from "../src/brain/graph/GraphSnapshot.ts"
import { LiveGraph } from "../src/brain/graph/LiveGraph.ts"
import type { Seed } from "../src/brain/graph/SpreadingActivation.ts"
import { spread } from "../src/brain/graph/SpreadingActivation.ts"

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const linkCounts = sizes.length > 0 ? sizes : [10_000, 100_000, 1_000_000]
const queries = 400
const warmup = 100
const rounds = 5
const seedsPerQuery = 3
const options = { hops: 3 } as const
/** The share of memories the live-graph variant appends after its base was built, as writes since a compaction do. */
const writtenSinceBase = 0.03

/** A small seeded generator (mulberry32), so every run builds the same graphs and asks the same queries. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const uuid = (next: () => number) => {
  let hex = ""
  for (let i = 0; i < 32; i++) hex += Math.floor(next() * 16).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const causal = ["causes", "caused_by", "enables", "prevents"]

/**
 * Shaped like what retain writes: temporal links to the previous turns of the same conversation, semantic links
 * mostly inside it, entity links towards popular memories (a power law over a shuffled ranking makes hubs), a
 * few causal links.
 */
const makeGraph = (linkCount: number) => {
  const next = random(linkCount)
  const n = Math.max(100, Math.round(linkCount / 5))
  const nodeIds = Array.from({ length: n }, () => uuid(next))
  const clusterSize = 40
  const ranking = Array.from({ length: n }, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[ranking[i], ranking[j]] = [ranking[j]!, ranking[i]!]
  }
  const popular = () => ranking[Math.floor(n * next() ** 3)]!
  const inCluster = (u: number) => {
    const base = u - (u % clusterSize)
    return Math.min(n - 1, base + Math.floor(next() * clusterSize))
  }
  const links: Array<IndexedLinkRow> = []
  while (links.length < linkCount) {
    const u = Math.floor(next() * n)
    const kind = next()
    if (kind < 0.3) {
      const gap = 1 + Math.floor(next() * 3)
      if (u - gap < 0) continue
      links.push({ from: u, to: u - gap, linkType: "temporal", weight: 1 / (1 + gap) })
    } else if (kind < 0.6) {
      const v = next() < 0.7 ? inCluster(u) : popular()
      links.push({ from: u, to: v, linkType: "semantic", weight: 0.55 + 0.4 * next() })
    } else if (kind < 0.95) {
      links.push({ from: u, to: popular(), linkType: "entity", weight: 1 })
    } else {
      const type = causal[Math.floor(next() * causal.length)]!
      links.push({ from: u, to: inCluster(u), linkType: type, weight: 1 })
    }
  }
  return { nodeIds, links }
}

/** The baseline: the same walk with no activation, only a visited stamp (hops and fan-out bounds kept). */
const breadthFirst = (snapshot: GraphSnapshot, seeds: ReadonlyArray<Seed>, visited: Uint32Array, stamp: number) => {
  const { offsets, targets } = snapshot
  let frontier: Array<number> = []
  for (const seed of seeds) {
    if (visited[seed.index] !== stamp) {
      visited[seed.index] = stamp
      frontier.push(seed.index)
    }
  }
  let scanned = 0
  for (let hop = 0; hop < options.hops; hop++) {
    const next: Array<number> = []
    for (const u of frontier) {
      const start = offsets[u]!
      const end = Math.min(offsets[u + 1]!, start + 32)
      for (let e = start; e < end; e++) {
        const v = targets[e]!
        if (visited[v] !== stamp) {
          visited[v] = stamp
          next.push(v)
        }
      }
      scanned += end - start
    }
    frontier = next
  }
  return scanned
}

interface NaiveEdge {
  readonly id: string
  readonly weight: number
}

/** The same max-activation spreading written the obvious way: Maps keyed by id, arrays of edge objects. */
const naiveSpread = (graph: Map<string, Array<NaiveEdge>>, seeds: ReadonlyArray<readonly [string, number]>) => {
  const activation = new Map<string, number>()
  const seedIds = new Set<string>()
  for (const [id, a] of seeds) {
    activation.set(id, a)
    seedIds.add(id)
  }
  const spreadAt = new Map<string, number>()
  let frontier = [...seedIds]
  let relaxed = 0
  for (let hop = 1; hop <= options.hops && frontier.length > 0; hop++) {
    const current = frontier.map((id) => [id, activation.get(id)!] as const)
    for (const [id, a] of current) spreadAt.set(id, a)
    const next = new Set<string>()
    for (const [id, a] of current) {
      for (const edge of (graph.get(id) ?? []).slice(0, 32)) {
        relaxed++
        const candidate = a * edge.weight * 0.5
        if (candidate < 0.01 || seedIds.has(edge.id) || candidate <= (activation.get(edge.id) ?? 0)) continue
        activation.set(edge.id, candidate)
        if (candidate > (spreadAt.get(edge.id) ?? 0) * 1.05) next.add(edge.id)
      }
    }
    frontier = [...next]
  }
  ;[...activation.entries()].sort((a, b) => b[1] - a[1])
  return relaxed
}

const toNaive = (snapshot: GraphSnapshot) => {
  const graph = new Map<string, Array<NaiveEdge>>()
  for (let u = 0; u < snapshot.nodeCount; u++) {
    const edges: Array<NaiveEdge> = []
    for (let e = snapshot.offsets[u]!; e < snapshot.offsets[u + 1]!; e++) {
      edges.push({ id: snapshot.ids[snapshot.targets[e]!]!, weight: snapshot.weights[e]! })
    }
    graph.set(snapshot.ids[u]!, edges)
  }
  return graph
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** Runs every variant once per round, interleaved, and keeps each one's fastest round (these machines are noisy). */
const compare = (variants: ReadonlyArray<(query: number) => number>) => {
  const best = variants.map(() => ({ millis: Infinity, edges: 0 }))
  const latencies = variants.map((): Array<number> => [])
  for (let round = 0; round < rounds; round++) {
    variants.forEach((run, k) => {
      let edges = 0
      const started = performance.now()
      for (let q = 0; q < queries; q++) {
        const t = performance.now()
        edges += run(q)
        latencies[k]!.push(performance.now() - t)
      }
      const millis = performance.now() - started
      if (millis < best[k]!.millis) best[k] = { millis, edges }
    })
  }
  return variants.map((_, k) => {
    const sorted = latencies[k]!.sort((x, y) => x - y)
    return {
      p50: percentile(sorted, 0.5),
      p95: percentile(sorted, 0.95),
      edgesPerQuery: best[k]!.edges / queries,
      perSecond: best[k]!.edges / (best[k]!.millis / 1000)
    }
  })
}

/**
 * The same graph as a brain holds it some writes after its last compaction: a base of the older memories and their
 * links, the newest `writtenSinceBase` appended with their links (a delta on the base nodes they link to).
 */
const asLiveGraph = (nodeIds: ReadonlyArray<string>, links: ReadonlyArray<IndexedLinkRow>) => {
  const cut = Math.floor(nodeIds.length * (1 - writtenSinceBase))
  const old = links.filter((link) => link.from < cut && link.to < cut)
  const live = LiveGraph.of(Snapshot.build({ nodeIds: nodeIds.slice(0, cut), indexedLinks: old }))
  live.appendNodes(nodeIds.slice(cut))
  live.addLinks(
    links.filter((link) => link.from >= cut || link.to >= cut).map((link) => ({
      fromId: nodeIds[link.from]!,
      toId: nodeIds[link.to]!,
      linkType: link.linkType,
      weight: link.weight
    }))
  )
  return live
}

/** The same link rows by id, each id a distinct string as a database driver returns them. */
const asDecodedRows = (nodeIds: ReadonlyArray<string>, links: ReadonlyArray<IndexedLinkRow>): Array<LinkRow> => {
  const copy = (id: string) => Buffer.from(id).toString()
  return links.map((link) => ({
    fromId: copy(nodeIds[link.from]!),
    toId: copy(nodeIds[link.to]!),
    linkType: link.linkType,
    weight: link.weight
  }))
}

const f = (x: number, digits = 2) => x.toFixed(digits)
const mega = (x: number) => `${(x / 1e6).toFixed(1)}M`
const buildRows: Array<ReadonlyArray<string>> = []
const queryRows: Array<ReadonlyArray<string>> = []
for (const linkCount of linkCounts) {
  const { nodeIds, links } = makeGraph(linkCount)
  const snapshot = Snapshot.build({ nodeIds, indexedLinks: links })
  const byId = Snapshot.build({ nodeIds, links: asDecodedRows(nodeIds, links) })
  buildRows.push([
    linkCount.toLocaleString("en"),
    snapshot.nodeCount.toLocaleString("en"),
    snapshot.edgeCount.toLocaleString("en"),
    f(snapshot.buildMillis, 0),
    f(byId.buildMillis, 0),
    `${f(snapshot.byteSize / 1048576, 1)} MB`
  ])

  const next = random(7)
  const seedSets = Array.from({ length: queries + warmup }, () =>
    Array.from({ length: seedsPerQuery }, () => ({
      index: Math.floor(next() * snapshot.nodeCount),
      activation: 0.5 + 0.5 * next()
    })))
  const visited = new Uint32Array(snapshot.nodeCount)
  const naive = toNaive(snapshot)
  const naiveSeeds = seedSets.map((seeds) => seeds.map((seed) => [snapshot.ids[seed.index]!, seed.activation] as const))
  const live = asLiveGraph(nodeIds, links)
  let stamp = 0
  let reached = 0
  const variants = [
    (q: number) => {
      const result = spread(snapshot, seedSets[q]!, options)
      reached += result.nodesReached
      return result.edgesRelaxed
    },
    (q: number) => spread(snapshot, seedSets[q]!, { ...options, maxNodes: 100 }).edgesRelaxed,
    (q: number) => breadthFirst(snapshot, seedSets[q]!, visited, ++stamp),
    (q: number) => naiveSpread(naive, naiveSeeds[q]!),
    (q: number) => spread(live, seedSets[q]!, { ...options, maxNodes: 100 }).edgesRelaxed
  ]
  // Warm-up on other seeds, so every variant is compiled before it is timed.
  for (let q = queries; q < queries + warmup; q++) for (const run of variants) run(q)
  reached = 0
  const [all, top, bfs, slow, liveTop] = compare(variants)
  queryRows.push([
    linkCount.toLocaleString("en"),
    f(all!.edgesPerQuery, 0),
    f(reached / (rounds * queries), 0),
    f(all!.p50, 3),
    f(all!.p95, 3),
    mega(all!.perSecond),
    mega(top!.perSecond),
    f(top!.p50, 3),
    f(bfs!.edgesPerQuery, 0),
    mega(bfs!.perSecond),
    `${f(all!.perSecond / bfs!.perSecond)}x`,
    mega(slow!.perSecond),
    `${f(all!.perSecond / slow!.perSecond, 1)}x`,
    f(liveTop!.p50, 3),
    `${f(liveTop!.p50 / top!.p50)}x`
  ])
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  console.log(`| ${header.join(" | ")} |`)
  console.log(`|${header.map(() => "---:").join("|")}|`)
  for (const row of rows) console.log(`| ${row.join(" | ")} |`)
}
console.log("spreading-activation: snapshot build (links by position, as the loader should send them, and by id)")
table(["links", "nodes", "directed edges", "build ms (positions)", "build ms (ids)", "snapshot"], buildRows)
console.log(
  `\n${queries} queries x ${seedsPerQuery} random seeds, hops ${options.hops}, fan-out 32, threshold 0.01, ` +
    `decay 0.5, one core, best of ${rounds} interleaved rounds; target >= 20M edges relaxed/s. ` +
    "Baseline: breadth-first walk over the same arrays (same hop and fan-out bounds, no arithmetic)."
)
table([
  "links",
  "edges relaxed/query",
  "nodes reached/query",
  "p50 ms",
  "p95 ms",
  "edges/s (all ranked)",
  "edges/s (top 100)",
  "p50 ms (top 100)",
  "BFS edges/query",
  "BFS edges/s (baseline)",
  "vs baseline",
  "naive Map edges/s",
  "vs naive",
  `p50 ms (top 100, live graph, ${writtenSinceBase * 100} % written since its base)`,
  "live / snapshot p50"
], queryRows)

/**
 * What a large forget costs another bank (issue 38): bank A holds N memories naming one entity, bank B a few; B
 * retains one item at a time in a loop while A's entity is forgotten. Run twice on fresh servers (PGlite, offline
 * defaults), the forget in one transaction (`SERVICE_API_FORGET_SLICE_ABOVE` above N) and in slices (the default),
 * and prints B's one-item retain p50 / max quiet and during the forget, and the forget's own time.
 * Rerun: `node bench/forget-isolation.ts [memories=3000]`.
 */
import { resolve } from "node:path"
import { backgroundDone } from "./support/HttpBank.ts"
import { percentile, send } from "./support/LoadClient.ts"
import { removeDir, startServer, tempDir } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const memories = Number(process.argv[2] ?? 3_000)
const entity = "Orla Finch"
const bankA = "/v1/default/banks/forget-a"
const bankB = "/v1/default/banks/forget-b"

const post = async (url: string, path: string, body: unknown) => {
  const answer = await send(url, { method: "POST", path, body: JSON.stringify(body) })
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`)
  return answer
}

/** B's one-item retains, one after another, until `until()` holds (at least `minimum`): their times in ms. */
const retainsOfB = async (url: string, until: () => boolean, minimum: number) => {
  const times: Array<number> = []
  for (let n = 0; n < minimum || !until(); n++) {
    const answer = await post(url, `${bankB}/memories`, {
      items: [{ content: `Dock note ${Date.now()}-${n}: the pilot boat tied up at berth ${n % 9}.` }]
    })
    times.push(answer.ms)
  }
  return times
}

const run = async (label: string, sliceAbove: number) => {
  const dataDir = tempDir("engram-forget-isolation-")
  const server = await startServer(root, dataDir, {
    SERVICE_API_FORGET_SLICE_ABOVE: String(sliceAbove),
    SERVICE_API_ENABLE_OBSERVATIONS: "false"
  })
  try {
    const url = server.url
    for (let from = 0; from < memories; from += 100) {
      const items = Array.from({ length: Math.min(100, memories - from) }, (_, i) => ({
        content: `${entity} logged tide reading ${from + i} at the north buoy, station ${(from + i) % 17}.`
      }))
      await post(url, `${bankA}/memories`, { items })
    }
    await post(url, `${bankB}/memories`, {
      items: Array.from({ length: 20 }, (_, i) => ({ content: `Harbour log ${i}: the crane was inspected.` }))
    })
    await backgroundDone(url, bankA)
    const quiet = await retainsOfB(url, () => true, 30)
    let forgetting = true
    const during = retainsOfB(url, () => !forgetting, 1)
    const forgot = await post(url, `${bankA}/forget`, { entity }).finally(() => {
      forgetting = false
    })
    const duringTimes = await during
    const removed = (JSON.parse(forgot.body) as { removed: { memories: number } }).removed.memories
    const row = {
      label,
      removed,
      forgetMs: forgot.ms,
      quietP50: percentile(quiet, 0.5),
      quietMax: Math.max(...quiet),
      duringP50: percentile(duringTimes, 0.5),
      duringMax: Math.max(...duringTimes),
      duringCount: duringTimes.length
    }
    console.error(JSON.stringify(row))
    return row
  } finally {
    await server.stop()
    removeDir(dataDir)
  }
}

const rows = [await run("one transaction", memories * 10), await run("in slices (default)", 1_000)]
console.log(`forget of an entity named by ${memories} memories (PGlite); bank B's one-item retains meanwhile, ms`)
console.log("| forget | removed | forget time | B p50 / max quiet | B p50 / max during | B retains during |")
console.log("|---|---:|---:|---:|---:|---:|")
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.removed} | ${r.forgetMs.toFixed(0)} | ${r.quietP50.toFixed(0)} / ${r.quietMax.toFixed(0)} | ` +
      `${r.duringP50.toFixed(0)} / ${r.duringMax.toFixed(0)} | ${r.duringCount} |`
  )
}

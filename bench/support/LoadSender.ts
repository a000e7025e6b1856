/**
 * The isolation bench's fifty clients (phase 9), run as a child process: in the bench's own process, reading fifty
 * clients' answers held up the event loop that times bank B and `/health` (up to 135 ms in one window), and that
 * showed as the server's latency. It reads its job from a JSON file (the server, the key, the clients, the seconds
 * and the calls, taken in turn), runs the closed loop and prints one JSON line: the seconds and, per kind of call,
 * how many completed and failed and the first failure. It never retries.
 * Run by `bench/isolation.ts` only: `node bench/support/LoadSender.ts <job.json>`.
 */
import { readFileSync } from "node:fs"
import { benchHeaders, type Call, closedLoop } from "./LoadClient.ts"

interface Job {
  readonly url: string
  readonly authorization: string
  readonly clients: number
  readonly seconds: number
  readonly calls: ReadonlyArray<Call>
}

const job = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Job
benchHeaders["authorization"] = job.authorization
let taken = 0
const result = await closedLoop(
  job.url,
  { clients: job.clients, seconds: job.seconds, warmup: 0 },
  () => job.calls[taken++ % job.calls.length]!
)
const byKind = [...result.byKind].map(([kind, samples]) => ({
  kind,
  completed: samples.completed,
  errors: samples.errors,
  firstError: samples.firstError
}))
console.log(JSON.stringify({ seconds: result.seconds, byKind }))

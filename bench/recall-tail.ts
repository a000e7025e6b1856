/**
 * The tail of one agent's recalls: a single client recalling in sequence, each question after the previous answer,
 * over loopback HTTP against `node src/main.ts` (PGlite) on a bank filled over HTTP and left until its background
 * work is done. Every recall records what it returned, and that telemetry is written in the background while the
 * agent keeps reading — the workload that showed a 150–350 ms recall about once a second. The baseline is the same
 * run's median. Target: p99 ≤ 3 × p50. Rerun: `node bench/recall-tail.ts [memories] [recalls]` (default 1000, 600).
 */
import { resolve } from "node:path"
import { recallQuestions } from "./support/Conversation.ts"
import { seedOverHttp, timedRecalls } from "./support/HttpBank.ts"
import { percentile } from "./support/LoadClient.ts"
import { startServer, tempDir } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const memories = Number(process.argv[2] ?? 1000)
const recalls = Number(process.argv[3] ?? 600)
const bank = "/v1/default/banks/tail"

const server = await startServer(root, tempDir("engram-bench-tail-"), {})
try {
  await seedOverHttp(server.url, bank, memories)
  const questions = recallQuestions(13, recalls)
  await timedRecalls(server.url, bank, questions.slice(0, 30)) // warm-up
  const started = performance.now()
  const times = await timedRecalls(server.url, bank, questions)
  const seconds = (performance.now() - started) / 1000
  const [p50, p95, p99, max] = [0.5, 0.95, 0.99, 1].map((q) => percentile(times, q))
  const slow = times.filter((t) => t > 3 * p50!).length
  console.log(
    `recall tail: one client, ${recalls} sequential recalls in ${seconds.toFixed(1)} s on ${memories} memories, ` +
      "PGlite (child process)"
  )
  console.log("| p50 (ms) | p95 | p99 | max | recalls over 3 × p50 | p99 / p50 |")
  console.log("|---:|---:|---:|---:|---:|---:|")
  console.log(
    `| ${p50!.toFixed(1)} | ${p95!.toFixed(1)} | ${p99!.toFixed(1)} | ${max!.toFixed(1)} | ${slow} | ` +
      `${(p99! / p50!).toFixed(2)}× (target ≤ 3×) |`
  )
} finally {
  await server.stop()
}
process.exit(0)

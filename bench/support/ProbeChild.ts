/**
 * One of the isolation bench's probe loops (bank B's recall, or `/health`), run in a process of its own. In the
 * bench's process a probe's timing included that process's own stalls: reading B's answers (27 KB each, hundreds a
 * second) and A's job held its event loop up by 23–26 ms in quiet windows, which showed as the server's latency
 * (`/health` p99 26–31 ms in a quiet window, 6–15 ms from a process of its own). Given its job, it sends the first
 * request once to warm its kept-alive socket (and, for B, load B's brain), starts its loop and says `ready`; told to
 * stop, it sends its latencies and the longest its own event loop was held up, and exits.
 * Run by `bench/isolation.ts` through `startProbe` only.
 */
import { fork } from "node:child_process"
import { Agent } from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { benchHeaders } from "./LoadClient.ts"
import { call, type Probe, probeLoop } from "./Probe.ts"

export interface ProbeJob {
  readonly url: string
  readonly authorization: string
  /** The requests, sent in turn. */
  readonly calls: ReadonlyArray<{ readonly method: string; readonly path: string; readonly body?: string }>
  readonly paceMs: number
}

export interface ProbeOutcome {
  readonly probe: Probe
  /** The longest this probe's own event loop was held up in the window, in ms. */
  readonly loopMaxMs: number
}

type FromParent = { readonly start: ProbeJob } | { readonly stop: true }
type FromChild = { readonly ready: true } | { readonly done: ProbeOutcome }

/** Starts a probe process; resolves once its loop runs, with `stop`, which ends the loop and answers what it saw. */
export const startProbe = (job: ProbeJob) =>
  new Promise<{ readonly stop: () => Promise<ProbeOutcome> }>((resolve, reject) => {
    const child = fork(import.meta.filename, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    let finished: ((outcome: ProbeOutcome) => void) | undefined
    child.on("message", (message: FromChild) => {
      if ("ready" in message) {
        resolve({
          stop: () =>
            new Promise<ProbeOutcome>((done) => {
              finished = done
              child.send({ stop: true } satisfies FromParent)
            })
        })
      } else {
        finished?.(message.done)
      }
    })
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`the probe process exited with ${code}`))
    })
    child.send({ start: job } satisfies FromParent)
  })

const runChild = () => {
  let running = true
  let outcome: Promise<ProbeOutcome> | undefined
  process.on("message", async (message: FromParent) => {
    if ("start" in message) {
      const job = message.start
      benchHeaders["authorization"] = job.authorization
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      await call(agent, job.url, job.calls[0]!.method, job.calls[0]!.path, job.calls[0]!.body)
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      let taken = 0
      outcome = probeLoop(job.url, agent, () => job.calls[taken++ % job.calls.length]!, job.paceMs, () => running)
        .then((probe) => ({ probe, loopMaxMs: delay.max / 1e6 }))
      process.send!({ ready: true } satisfies FromChild)
    } else {
      running = false
      process.send!({ done: await outcome! } satisfies FromChild, undefined, undefined, () => process.exit(0))
    }
  })
}

if (process.send !== undefined && process.argv[1] === import.meta.filename) runChild()

/**
 * Runs fast-check over one fuzz target (a route, an MCP tool) with a seed derived from the run's seed and the
 * target's name — adding a route does not change the inputs of the others — and turns a failure into a finding
 * that says how to replay it. The run's seed is fixed unless ENGRAM_FUZZ_SEED says otherwise; ENGRAM_FUZZ_RUNS
 * raises the number of inputs per target for a longer local search.
 */
import fc from "fast-check"
import { request as httpRequest } from "node:http"
import { cpus, loadavg } from "node:os"

export const fuzzSeed = Number(process.env["ENGRAM_FUZZ_SEED"] ?? 20261123)
export const runsPerTarget = Number(process.env["ENGRAM_FUZZ_RUNS"] ?? 16)

const seedOf = (target: string) => {
  let hash = fuzzSeed | 0
  for (let index = 0; index < target.length; index++) hash = Math.imul(hash ^ target.charCodeAt(index), 16777619)
  return hash | 0
}

export interface Finding {
  readonly target: string
  readonly problem: string
}

/**
 * Checks `probe` (which answers a problem, or `undefined` when the input was handled well) on fuzzed inputs. The
 * first failure ends the target without shrinking: inputs are single, described mutations, already readable.
 */
export const fuzzTarget = async <A>(
  target: string,
  arbitrary: fc.Arbitrary<A>,
  probe: (input: A) => Promise<string | undefined>
): Promise<Finding | undefined> => {
  let problem = ""
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (input) => {
      const found = await probe(input)
      if (found !== undefined) problem = found
      return found === undefined
    }),
    { seed: seedOf(target), numRuns: runsPerTarget, endOnFailure: true }
  )
  if (!details.failed) return undefined
  const error = details.errorInstance instanceof Error && problem === ""
    ? `threw ${details.errorInstance.message}`
    : problem
  return {
    target,
    problem:
      `${error}\n    replay: ENGRAM_FUZZ_SEED=${fuzzSeed} (fast-check seed ${details.seed}, path ${details.counterexamplePath})`
  }
}

export const describeFindings = (findings: ReadonlyArray<Finding>) =>
  `${findings.length} fuzz finding(s) with ENGRAM_FUZZ_SEED=${fuzzSeed}:\n` +
  findings.map((finding) => `- ${finding.target}: ${finding.problem}`).join("\n")

/** Never a 5xx; a 4xx is JSON with a non-empty `detail`. Answers the problem, or `undefined`. */
export const httpProblem = (status: number, contentType: string | null, text: string): string | undefined => {
  if (status >= 500) return `answered ${status}: ${text.slice(0, 300)}`
  if (status < 400) return undefined
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return `answered ${status} without a JSON body (${contentType}): ${text.slice(0, 200)}`
  }
  return typeof body?.detail === "string" && body.detail.length > 0
    ? undefined
    : `answered ${status} without \`detail\`: ${text.slice(0, 200)}`
}

/**
 * Runs `run` while /health is asked back to back (each after the previous answered); the slowest /health answer in
 * milliseconds beside `run`'s result. A body the edge refuses must never hold the event loop that long.
 */
export const withHealthTimed = async <A>(base: string, run: () => Promise<A>) => {
  let running = true
  let slowest = 0
  const probe = (async () => {
    while (running) {
      const started = performance.now()
      await (await fetch(`${base}/health`)).arrayBuffer()
      slowest = Math.max(slowest, performance.now() - started)
    }
  })()
  const result = await run().finally(() => {
    running = false
  })
  await probe
  return { result, slowestHealthMs: slowest }
}

/**
 * A POST on a connection of its own, answered with its status and body; with `declared`, the header claims that
 * length and only `body` is sent (the connection is dropped once the answer is in).
 */
export const rawPost = (
  base: string,
  path: string,
  body: Uint8Array,
  options: { readonly contentType?: string; readonly declared?: number } = {}
) =>
  new Promise<{ readonly status: number; readonly text: string; readonly contentType: string | null }>((resolve) => {
    const headers = {
      "content-type": options.contentType ?? "application/json",
      "content-length": String(options.declared ?? body.length)
    }
    const request = httpRequest(new URL(path, base), { method: "POST", agent: false, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        request.destroy()
        const contentType = response.headers["content-type"] ?? null
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), contentType })
      })
    })
    request.on("error", (error) => resolve({ status: 0, text: String(error), contentType: null }))
    if (options.declared === undefined) request.end(body)
    else request.write(body)
  })

/**
 * How long /health may take while a hostile body is in flight: `target` ms, or twice the slowest of 20 quiet /health
 * answers when a quiet server already answers slower. On a machine loaded beyond its cores (1-minute load average
 * above the CPU count) wall-clock latency measures the scheduler, not the server: the budget is then not enforced
 * (Infinity) and the caller's log says so; the answers themselves are still checked.
 */
export const healthBudgetMs = async (base: string, target = 100) => {
  if (loadavg()[0]! > cpus().length) {
    console.warn(
      `load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores: /health latency is measured, not enforced`
    )
    return Number.POSITIVE_INFINITY
  }
  let slowest = 0
  for (let i = 0; i < 20; i++) {
    const started = performance.now()
    await (await fetch(`${base}/health`)).arrayBuffer()
    slowest = Math.max(slowest, performance.now() - started)
  }
  return Math.max(target, 2 * slowest)
}

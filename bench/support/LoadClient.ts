/**
 * A closed-loop HTTP load generator for loopback benchmarks: each client sends its next request as soon as the
 * previous one answered, over keep-alive connections, for a fixed time after a warm-up. Records latency per kind
 * of request; throughput counts what completed inside the measured window. It never retries a failed request.
 */
import { Agent, request as httpRequest } from "node:http"

export const agent = new Agent({ keepAlive: true, maxSockets: 64 })

export interface Call {
  readonly kind: string
  readonly method: string
  readonly path: string
  readonly body?: string
}

export interface Answer {
  readonly status: number
  readonly body: string
  readonly ms: number
}

/** Headers every bench request carries (the API key of a server started with one), set once by the bench. */
export const benchHeaders: Record<string, string> = {}

/** One request; a network failure answers status 0 with the error as its body. */
export const send = (base: string, call: Omit<Call, "kind">): Promise<Answer> =>
  new Promise((resolve) => {
    const started = performance.now()
    const url = new URL(call.path, base)
    const request = httpRequest(url, {
      method: call.method,
      agent,
      headers: call.body === undefined
        ? { ...benchHeaders }
        : { ...benchHeaders, "content-type": "application/json", "content-length": Buffer.byteLength(call.body) }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          ms: performance.now() - started
        }))
      response.on("error", (error) => resolve({ status: 0, body: String(error), ms: performance.now() - started }))
    })
    request.on("error", (error) => resolve({ status: 0, body: String(error), ms: performance.now() - started }))
    if (call.body !== undefined) request.write(call.body)
    request.end()
  })

/** JSON of a successful answer; anything else is an error naming the call. */
export const json = async (base: string, call: Omit<Call, "kind">): Promise<any> => {
  const answer = await send(base, call)
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${call.method} ${call.path} answered ${answer.status}: ${answer.body.slice(0, 500)}`)
  }
  return JSON.parse(answer.body)
}

export interface Samples {
  readonly latencies: Array<number>
  completed: number
  errors: number
  firstError?: string
}

export interface LoadResult {
  readonly seconds: number
  readonly byKind: Map<string, Samples>
}

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
}

const window = async (base: string, clients: number, seconds: number, next: (client: number) => Call) => {
  const byKind = new Map<string, Samples>()
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    while (performance.now() < deadline) {
      const call = next(client)
      const answer = await send(base, call)
      const samples = byKind.get(call.kind) ?? { latencies: [], completed: 0, errors: 0 }
      byKind.set(call.kind, samples)
      if (answer.status >= 200 && answer.status < 300) {
        samples.latencies.push(answer.ms)
        if (performance.now() <= deadline) samples.completed++
      } else {
        samples.errors++
        samples.firstError ??= `${answer.status} ${answer.body.slice(0, 300)}`
      }
    }
  }))
  return { seconds, byKind }
}

/** `clients` closed loops for `warmup` seconds (discarded), then for `seconds` (measured). */
export const closedLoop = async (
  base: string,
  options: { readonly clients: number; readonly seconds: number; readonly warmup: number },
  next: (client: number) => Call
): Promise<LoadResult> => {
  if (options.warmup > 0) await window(base, options.clients, options.warmup, next)
  return window(base, options.clients, options.seconds, next)
}

/** One client, one step after another until `count` steps or `seconds` have passed; each step reports its ms. */
export const sequence = async (
  options: { readonly count: number; readonly seconds: number },
  step: (index: number) => Promise<number>
): Promise<Array<number>> => {
  const samples: Array<number> = []
  const deadline = performance.now() + options.seconds * 1000
  for (let index = 0; index < options.count && performance.now() < deadline; index++) samples.push(await step(index))
  return samples
}

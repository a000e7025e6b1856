/**
 * The isolation bench's hostile clients (issue 33), run as a child process: sent from the bench's own process, the
 * writing of 25 MB bodies held up the event loop that times bank B (68 ms in one window), and that showed as the
 * server's latency. It builds its bodies, prints `ready`, waits for a line on stdin, then runs `clients` loops for
 * `seconds` and prints one JSON line: each answer ("no key 401") and how many times it came. It must never retry.
 * Run by `bench/isolation.ts` only: `node bench/support/HostileSender.ts '{"url":…,"path":…,"authorization":…,…}'`.
 */
import { request as httpRequest } from "node:http"
import { createInterface } from "node:readline"

interface Job {
  readonly url: string
  readonly path: string
  readonly authorization: string
  readonly clients: number
  readonly seconds: number
}

const job = JSON.parse(process.argv[2]!) as Job

/**
 * One hostile request on a connection of its own, as an attacker would open them: its status once the answer is in
 * (the connection is then dropped, whatever of the body is still unsent); 0 when the connection failed before an
 * answer. `declared` claims a length the body does not have: the server must answer from the header alone.
 */
const hostile = (body: Buffer, options: { readonly key: boolean; readonly declared?: number }) =>
  new Promise<number>((resolve) => {
    const headers = {
      "content-type": "application/json",
      "content-length": String(options.declared ?? body.length),
      ...(options.key ? { authorization: job.authorization } : {})
    }
    const request = httpRequest(new URL(job.path, job.url), { method: "POST", agent: false, headers }, (response) => {
      response.resume()
      response.on("end", () => {
        request.destroy()
        resolve(response.statusCode ?? 0)
      })
      response.on("error", () => resolve(response.statusCode ?? 0))
    })
    // The server may close after its refusal while the body is still being written (EPIPE, ECONNRESET): the answer
    // already read stands; only a failure before any answer counts as 0.
    request.on("error", () => resolve(0))
    if (options.declared === undefined) request.end(body)
    else request.write(body)
  })

// 25 MB of 5M two-letter strings (the issue's body), and 100k levels of nesting; built before the bench's window.
const wide = Buffer.from(`[${`"ab",`.repeat(5_000_000 - 1)}"ab"]`)
const deep = Buffer.from(`{"items":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)
const kinds = [
  { name: "no key", send: () => hostile(wide, { key: false }) },
  { name: "over the cap", send: () => hostile(wide.subarray(0, 1 << 20), { key: true, declared: 2 ** 31 }) },
  { name: "wide", send: () => hostile(wide, { key: true }) },
  { name: "deep", send: () => hostile(deep, { key: true }) }
]

const run = async () => {
  const answers = new Map<string, number>()
  const end = performance.now() + job.seconds * 1000
  await Promise.all(Array.from({ length: job.clients }, async (_, client) => {
    for (let n = client; performance.now() < end; n++) {
      const kind = kinds[n % kinds.length]!
      const answer = `${kind.name} ${await kind.send()}`
      answers.set(answer, (answers.get(answer) ?? 0) + 1)
    }
  }))
  process.stdout.write(`${JSON.stringify(Object.fromEntries(answers))}\n`)
}

process.stdout.write("ready\n")
createInterface({ input: process.stdin }).once("line", () => {
  run().then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
})

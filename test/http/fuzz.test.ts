/**
 * Property-based fuzzing of every route in the running server's /openapi.json (a new route is covered without
 * touching this file): malformed JSON, wrong types, NUL and control characters, lone surrogates, 2 MB strings,
 * numbers out of range, unknown enum values, hostile path ids and query values, missing and extra fields.
 * Never a 5xx; every 4xx is JSON with `detail`; /health stays 200; the sentinel bank does not change.
 *
 * Why a separate target bank rather than requests invalid by construction: a single mutation does not always make
 * a request invalid (an extra NUL in `context` may be cleaned and stored, a negative offset may be accepted), and
 * those requests are the interesting ones — they reach the handlers. So fuzzed requests address a target bank
 * that they may legitimately change, and a sentinel bank seeded the same way must stay identical; fuzzed requests
 * reach for it only through ids that must not resolve to it (its record ids under the target bank, near-miss
 * bank ids such as `fuzz-sentinel%00` or `..%2F..%2Fbanks%2Ffuzz-sentinel`). After each route one SQL read digests
 * both banks' stored rows (`watchBanks`): a change to the sentinel's rows is then checked against what a user reads
 * about it, attributed to the route; the user's reads are compared once more at the end; the target's id pools are
 * read again only after its rows changed.
 *
 * A second pass sends bodies past the edge's caps (a declared length over the byte cap, 1.2M elements, 100k levels)
 * to every route with a JSON body, and pathological globs to the codebase imports, while /health is asked back to
 * back: each must be refused (or handled) while /health answers within 100 ms (twice a quiet /health if that is
 * slower; logged and not enforced on a machine loaded beyond its cores, see `healthBudgetMs`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ensureSeeded, seedBank, watchBanks } from "../support/fuzz/FuzzBanks.ts"
import {
  describeFindings,
  type Finding,
  fuzzTarget,
  healthBudgetMs,
  httpProblem,
  rawPost,
  withHealthTimed
} from "../support/fuzz/FuzzRun.ts"
import { almostMatchingPaths, capBodies, pathologicalGlobs } from "../support/fuzz/Hostile.ts"
import { makeResolver } from "../support/fuzz/JsonSchemaArbitrary.ts"
import { requestArbitrary, routesOf, type WireRequest } from "../support/fuzz/RestRequests.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { makeZip } from "../support/ZipWriter.ts"

const target = "fuzz-target"
const sentinel = "fuzz-sentinel"

/** Answers by status over the run: the share of 2xx shows how many fuzzed requests got past validation. */
const statuses = new Map<number, number>()

const send = async (base: string, request: WireRequest): Promise<string | undefined> => {
  const response = await fetch(base + request.path, {
    method: request.method,
    headers: request.contentType === undefined ? {} : { "content-type": request.contentType },
    ...(request.body === undefined ? {} : { body: request.body })
  })
  const text = await response.text()
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
  const problem = httpProblem(response.status, response.headers.get("content-type"), text)
  const path = request.path.length > 160 ? `${request.path.slice(0, 160)}…` : request.path
  return problem === undefined ? undefined : `${request.method} ${path} [${request.mutations}] ${problem}`
}

layer(testApp(), { excludeTestServices: true })("fuzzing the REST API", (it) => {
  it.effect(
    "no route answers 5xx or a 4xx without detail; the server stays healthy; the sentinel is untouched",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const document = (yield* server.request("GET", "/openapi.json")).body
        const routes = routesOf(document)
        assert.isAbove(routes.length, 50, "the OpenAPI document lists the routes")
        const resolve = makeResolver(document)

        yield* seedBank(sentinel)
        yield* seedBank(target)
        const banks = yield* watchBanks(target, sentinel)

        const findings: Array<Finding> = []
        for (const route of routes) {
          const name = `${route.method} ${route.template}`
          const arbitrary = requestArbitrary(route, { resolve, pools: yield* banks.pools, sentinel })
          const finding = yield* Effect.promise(() =>
            fuzzTarget(name, arbitrary, (request) => send(server.url, request))
          )
          if (finding !== undefined) findings.push(finding)
          findings.push(...yield* banks.afterEach(name))
        }
        findings.push(...yield* banks.atEnd)
        const total = [...statuses.values()].reduce((sum, count) => sum + count, 0)
        const accepted = [...statuses].filter(([status]) => status < 300).reduce((sum, [, count]) => sum + count, 0)
        console.log(
          `fuzzed ${routes.length} routes with ${total} requests; answers by status:`,
          Object.fromEntries(statuses)
        )
        assert.strictEqual(findings.length, 0, describeFindings(findings))
        // Fuzzing that never gets past validation would prove little: some mutated requests must be accepted.
        assert.isAbove(accepted, total * 0.05, "share of fuzzed requests answered 2xx")
      }),
    600_000
  )

  it.effect(
    "bodies past the caps and pathological globs are answered while /health answers within 100 ms",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const routes = routesOf((yield* server.request("GET", "/openapi.json")).body)
          .filter((route) => route.body?.mediaType.includes("json") === true)
        assert.isAbove(routes.length, 30, "routes with a JSON body")
        yield* ensureSeeded(target)
        const budget = yield* Effect.promise(() => healthBudgetMs(server.url))
        const findings: Array<string> = []
        const check = (
          name: string,
          answer: { status: number; text: string; contentType: string | null },
          slowest: number
        ) => {
          const problem = httpProblem(answer.status, answer.contentType, answer.text)
          if (problem !== undefined) findings.push(`${name}: ${problem}`)
          if (slowest >= budget) findings.push(`${name}: /health took ${slowest.toFixed(0)} ms`)
        }
        let slowestOverall = 0
        for (const route of routes) {
          const path = route.template.replace(/\{(\w+)\}/g, (_, name: string) => (name === "bank_id" ? target : "x"))
          for (const hostile of capBodies) {
            const { result, slowestHealthMs } = yield* Effect.promise(() =>
              withHealthTimed(server.url, () =>
                rawPost(
                  server.url,
                  path,
                  hostile.body,
                  hostile.declared === undefined ? {} : { declared: hostile.declared }
                ))
            )
            slowestOverall = Math.max(slowestOverall, slowestHealthMs)
            const name = `${route.method} ${route.template} with ${hostile.name}`
            if (result.status < 400) findings.push(`${name}: accepted (${result.status})`)
            check(name, result, slowestHealthMs)
          }
        }

        const zip = makeZip(
          almostMatchingPaths.map((name) => ({ name, data: new TextEncoder().encode("export const a = 1\n") }))
        )
        const boundary = "engram-fuzz-globs"
        for (const glob of pathologicalGlobs) {
          const request = JSON.stringify({ name: `globs-${glob.length}`, include_globs: [glob], exclude_globs: [glob] })
          const body = Buffer.concat([
            Buffer.from(
              `--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="a.zip"\r\n` +
                "Content-Type: application/zip\r\n\r\n"
            ),
            Buffer.from(zip),
            Buffer.from(
              `\r\n--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n${request}\r\n--${boundary}--\r\n`
            )
          ])
          const { result, slowestHealthMs } = yield* Effect.promise(() =>
            withHealthTimed(server.url, () =>
              rawPost(server.url, `/v1/default/banks/${target}/codebases/import/zip`, body, {
                contentType: `multipart/form-data; boundary=${boundary}`
              }))
          )
          slowestOverall = Math.max(slowestOverall, slowestHealthMs)
          check(`zip import with glob ${glob}`, result, slowestHealthMs)
        }
        console.log(
          `cap bodies: ${routes.length} routes × ${capBodies.length} bodies, ${pathologicalGlobs.length} globs; ` +
            `slowest /health ${slowestOverall.toFixed(1)} ms (budget ${budget.toFixed(0)} ms)`
        )
        assert.deepStrictEqual(findings, [])
      }),
    600_000
  )
})

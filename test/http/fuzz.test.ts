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
 * bank ids such as `fuzz-sentinel%00` or `..%2F..%2Fbanks%2Ffuzz-sentinel`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ensureSeeded, fuzzPools, idPools, seedBank, watchSentinel } from "../support/fuzz/FuzzBanks.ts"
import { describeFindings, type Finding, fuzzTarget, httpProblem } from "../support/fuzz/FuzzRun.ts"
import { makeResolver } from "../support/fuzz/JsonSchemaArbitrary.ts"
import { requestArbitrary, routesOf, type WireRequest } from "../support/fuzz/RestRequests.ts"
import { TestServer, testApp } from "../support/TestServer.ts"

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
  it.effect("no route answers 5xx or a 4xx without detail; the server stays healthy; the sentinel is untouched", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const document = (yield* server.request("GET", "/openapi.json")).body
      const routes = routesOf(document)
      assert.isAbove(routes.length, 50, "the OpenAPI document lists the routes")
      const resolve = makeResolver(document)

      yield* seedBank(sentinel)
      yield* seedBank(target)
      const sentinelIds = yield* idPools(sentinel)
      assert.isAbove(sentinelIds["memory_id"]!.length, 0, "the sentinel has memories")
      const checkAfter = yield* watchSentinel(sentinel)

      const findings: Array<Finding> = []
      for (const route of routes) {
        const name = `${route.method} ${route.template}`
        yield* ensureSeeded(target)
        const pools = fuzzPools(target, yield* idPools(target), sentinelIds)
        const arbitrary = requestArbitrary(route, { resolve, pools, sentinel })
        const finding = yield* Effect.promise(() => fuzzTarget(name, arbitrary, (request) => send(server.url, request)))
        if (finding !== undefined) findings.push(finding)
        findings.push(...yield* checkAfter(name))
      }
      const total = [...statuses.values()].reduce((sum, count) => sum + count, 0)
      const accepted = [...statuses].filter(([status]) => status < 300).reduce((sum, [, count]) => sum + count, 0)
      console.log(`fuzzed ${routes.length} routes with ${total} requests; answers by status:`, Object.fromEntries(statuses))
      assert.strictEqual(findings.length, 0, describeFindings(findings))
      // Fuzzing that never gets past validation would prove little: some mutated requests must be accepted.
      assert.isAbove(accepted, total * 0.05, "share of fuzzed requests answered 2xx")
    }), 600_000)
})

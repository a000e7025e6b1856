/** Health, version, OpenAPI, docs, metrics, JSON 404s and oversized bodies over a real socket. */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { databaseTier, testApp, TestServer } from "../support/TestServer.ts"

const requiredRoutes = [
  "get /version",
  "get /health",
  "get /metrics",
  "get /v1/default/banks",
  "put /v1/default/banks/{bank_id}",
  "patch /v1/default/banks/{bank_id}",
  "delete /v1/default/banks/{bank_id}",
  "get /v1/default/banks/{bank_id}/profile",
  "put /v1/default/banks/{bank_id}/profile",
  "get /v1/default/banks/{bank_id}/stats",
  "get /v1/default/banks/{bank_id}/config",
  "patch /v1/default/banks/{bank_id}/config",
  "delete /v1/default/banks/{bank_id}/config",
  "get /v1/default/banks/{bank_id}/operations",
  "get /v1/default/banks/{bank_id}/operations/{operation_id}",
  "get /v1/default/banks/{bank_id}/operations/{operation_id}/result",
  "delete /v1/default/banks/{bank_id}/operations/{operation_id}",
  "post /v1/default/banks/{bank_id}/operations/{operation_id}/retry"
]

layer(testApp({ maxRequestBytes: 64 * 1024 }), { excludeTestServices: true })("monitoring", (it) => {
  it.effect("health checks the database; version lists the features", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const health = yield* server.request("GET", "/health")
      assert.deepStrictEqual(health.body, { status: "healthy", database: "ok" })
      const version = yield* server.request("GET", "/version")
      assert.isString(version.body.api_version)
      assert.isTrue(version.body.features.worker)
      assert.isTrue(version.body.features.bank_config_api)
      // The specification's nine flags, and the six more that Hindsight 0.9 clients require.
      assert.deepStrictEqual(Object.keys(version.body.features).sort(), [
        "audit_log",
        "bank_config_api",
        "bank_llm_health",
        "brain_import_export",
        "brain_runtime",
        "document_export_api",
        "document_import_api",
        "file_upload_api",
        "llm_trace",
        "mcp",
        "observations",
        "store_document_text",
        "sub_routine",
        "timeline_v2",
        "worker"
      ])
      // Readiness is /health under the probe name; liveness answers without asking the database.
      const ready = yield* server.request("GET", "/health/ready")
      assert.strictEqual(ready.status, 200)
      assert.strictEqual(ready.body.status, "healthy")
      assert.include(["ok", "busy"], ready.body.database)
      const live = yield* server.request("GET", "/health/live")
      assert.strictEqual(live.status, 200)
      assert.strictEqual(live.body.status, "alive")
      assert.strictEqual(live.body.version, version.body.api_version)
      assert.isAtLeast(live.body.uptime_seconds, 0)
    }))

  it.effect("health answers while a long statement holds the database: busy on the embedded session, ok beside it on a pool", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const started = yield* Deferred.make<void>()
      // A transaction holds PGlite's one session until the sleep ends; PostgreSQL runs the probe on another connection.
      const long = yield* Effect.gen(function*() {
        yield* sql`SELECT 1`
        yield* Deferred.succeed(started, undefined)
        yield* sql`SELECT pg_sleep(3)`
      }).pipe(sql.withTransaction, Effect.forkChild)
      yield* Deferred.await(started)
      const during: Array<string> = []
      while (long.pollUnsafe() === undefined) {
        const health = yield* server.request("GET", "/health")
        assert.strictEqual(health.status, 200, health.text)
        if (long.pollUnsafe() === undefined) during.push(health.body.database)
        yield* Effect.sleep("50 millis")
      }
      yield* Fiber.join(long)
      assert.isAbove(during.length, 0, "health answered while the statement ran")
      assert.include(during, databaseTier === "pglite" ? "busy" : "ok")
      for (
        let attempt = 0;
        attempt < 50 && (yield* server.request("GET", "/health")).body.database !== "ok";
        attempt++
      ) {
        yield* Effect.sleep("20 millis")
      }
      assert.strictEqual((yield* server.request("GET", "/health")).body.database, "ok")
    }))

  it.effect("OpenAPI 3.1 documents every bank, operation and monitoring route; /docs serves a page", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const openapi = yield* server.request("GET", "/openapi.json")
      assert.match(openapi.body.openapi, /^3\.1/)
      const served = new Set<string>()
      for (const [path, item] of Object.entries(openapi.body.paths as Record<string, object>)) {
        for (const method of Object.keys(item)) served.add(`${method} ${path}`)
      }
      for (const route of requiredRoutes) assert.isTrue(served.has(route), route)
      const docs = yield* server.request("GET", "/docs")
      assert.strictEqual(docs.status, 200)
      assert.include(docs.text.toLowerCase(), "<html")
    }))

  it.effect("metrics are Prometheus text with requests by route and status, operations and actors", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // Counters are cumulative for the process (other tests may share it): the request adds exactly one.
      const statsRequests = (text: string) =>
        Number(
          text.match(
            /engram_http_requests_total\{method="GET",route="\/v1\/default\/banks\/\{bank_id\}\/stats",status="200"\} (\d+)/
          )?.[1] ?? 0
        )
      const before = statsRequests((yield* server.request("GET", "/metrics")).text)
      yield* server.request("PUT", "/v1/default/banks/metered", { json: {} })
      yield* server.request("GET", "/v1/default/banks/metered/stats")
      const metrics = yield* server.request("GET", "/metrics")
      assert.strictEqual(metrics.status, 200)
      assert.include(metrics.headers.get("content-type") ?? "", "text/plain")
      assert.strictEqual(statsRequests(metrics.text), before + 1)
      assert.include(metrics.text, "engram_http_request_duration_seconds_bucket")
      assert.include(metrics.text, "engram_bank_actors")
    }))

  it.effect("unknown routes and oversized bodies answer JSON errors with detail", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const missing = yield* server.request("GET", "/v1/default/nothing-here")
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "/v1/default/nothing-here")
      const wrongMethod = yield* server.request("POST", "/version")
      assert.strictEqual(wrongMethod.status, 404)
      assert.isString(wrongMethod.body.detail)
      const huge = yield* server.request("PUT", "/v1/default/banks/huge", { json: { name: "x".repeat(100_000) } })
      assert.isAtLeast(huge.status, 400)
      assert.isBelow(huge.status, 500)
      assert.isString(huge.body.detail)
      const absent = yield* server.request("GET", "/v1/default/banks")
      assert.isFalse(absent.body.banks.some((bank: any) => bank.bank_id === "huge"))
    }))
})

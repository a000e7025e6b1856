/**
 * Audit logs over the real HTTP server, through plain requests, the published Hindsight client and MCP: every
 * mutating request on a bank (REST writes, refusals included, and MCP tool calls that may change it) leaves one entry
 * saying who, what and when — never a body or a key; reads leave none; the list pages and filters, the stats bucket
 * by hour or day; a deleted bank's trail goes with it. With API keys the actor is the key's fingerprint.
 */
import { assert, layer } from "@effect/vitest"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { Effect, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const request = (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, { headers, ...(json === undefined ? {} : { json }) })
  })

/** What an operation of the published client answers with on success, as its types declare it. */
type Data<F extends (...args: any) => any> = NonNullable<Awaited<ReturnType<F>>["data"]>

/** Every bucket's counts added up by action. */
const countsOf = (buckets: ReadonlyArray<{ readonly actions: Record<string, number> }>) => {
  const counts: Record<string, number> = {}
  for (const bucket of buckets) {
    for (const [action, count] of Object.entries(bucket.actions)) counts[action] = (counts[action] ?? 0) + count
  }
  return counts
}

const secretText = "The vault combination is 4-8-15-16."

layer(testApp(), { excludeTestServices: true })("audit logs", (it) => {
  it.effect("each write is one entry (who, what, when, status) newest first; reads (recall and reflect too) leave none; bodies are never kept", () =>
    Effect.gen(function*() {
      const id = "audit-writes"
      assert.strictEqual((yield* request("PUT", bank(id), { reflect_mission: secretText })).status, 200)
      const directive = yield* request("POST", `${bank(id)}/directives`, { name: "Rule", content: secretText })
      yield* request("PATCH", `${bank(id)}/directives/${directive.body.id}`, { priority: 3 })
      yield* request("GET", `${bank(id)}/directives`)
      yield* request("GET", bank(id) + "/config")
      // POSTs that only ask leave none either: recall is answered from the brain with no write.
      assert.strictEqual((yield* request("POST", `${bank(id)}/memories/recall`, { query: "vault" })).status, 200)
      assert.strictEqual((yield* request("POST", `${bank(id)}/reflect`, { query: "vault?" })).status, 200)
      const invalid = yield* request("POST", `${bank(id)}/directives`, { name: "", content: "x" })
      assert.strictEqual(invalid.status, 400)
      yield* request("DELETE", `${bank(id)}/directives/${directive.body.id}`)
      yield* request("DELETE", `${bank(id)}/directives/no-such-directive`)
      // Refused by the browser guard, outside the API: the entry has the status the client got.
      const server = yield* TestServer
      const plain = yield* server.request("POST", `${bank(id)}/directives`, {
        body: JSON.stringify({ name: "Rule", content: secretText }),
        headers: { "content-type": "text/plain" }
      })
      assert.strictEqual(plain.status, 415)

      const listed = yield* request("GET", `${bank(id)}/audit-logs`)
      assert.strictEqual(listed.status, 200, listed.text)
      assert.strictEqual(listed.body.bank_id, id)
      assert.strictEqual(listed.body.total, 7)
      assert.strictEqual(listed.body.limit, 100)
      assert.strictEqual(listed.body.offset, 0)
      const seen = listed.body.items.map((
        entry: any
      ) => [entry.action, entry.request.method, entry.request.route, entry.response.status])
      assert.deepStrictEqual(seen, [
        ["directives.create", "POST", "/v1/default/banks/{bank_id}/directives", 415],
        ["directives.delete", "DELETE", "/v1/default/banks/{bank_id}/directives/{directive_id}", 404],
        ["directives.delete", "DELETE", "/v1/default/banks/{bank_id}/directives/{directive_id}", 200],
        ["directives.create", "POST", "/v1/default/banks/{bank_id}/directives", 400],
        ["directives.update", "PATCH", "/v1/default/banks/{bank_id}/directives/{directive_id}", 200],
        ["directives.create", "POST", "/v1/default/banks/{bank_id}/directives", 200],
        ["banks.put", "PUT", "/v1/default/banks/{bank_id}", 200]
      ])
      for (const entry of listed.body.items) {
        assert.strictEqual(entry.transport, "http")
        assert.strictEqual(entry.bank_id, id)
        assert.deepStrictEqual(entry.metadata, { actor: "anonymous" })
        assert.isAtMost(Date.parse(entry.started_at), Date.parse(entry.ended_at))
        assert.strictEqual(entry.duration_ms, Date.parse(entry.ended_at) - Date.parse(entry.started_at))
      }
      assert.notInclude(listed.text, secretText)
      assert.notInclude(listed.text, "4-8-15-16")
    }))

  it.effect("the list pages and filters by action, transport and time; a bad date or period is a 400", () =>
    Effect.gen(function*() {
      const id = "audit-filters"
      yield* request("PUT", bank(id), {})
      for (const content of ["one", "two", "three"]) {
        yield* request("POST", `${bank(id)}/memories`, { items: [{ content: `Fact ${content}.` }] })
      }
      const page = yield* request("GET", `${bank(id)}/audit-logs?limit=2&offset=1`)
      assert.strictEqual(page.body.total, 4)
      assert.strictEqual(page.body.items.length, 2)
      assert.deepStrictEqual(page.body.items.map((entry: any) => entry.action), ["memories.retain", "memories.retain"])
      const retains = yield* request("GET", `${bank(id)}/audit-logs?action=memories.retain`)
      assert.strictEqual(retains.body.total, 3)
      assert.strictEqual((yield* request("GET", `${bank(id)}/audit-logs?transport=mcp`)).body.total, 0)
      const oldest = page.body.items[1].started_at
      const fromOldest = yield* request("GET", `${bank(id)}/audit-logs?start_date=${encodeURIComponent(oldest)}`)
      assert.strictEqual(fromOldest.body.total, 3)
      const beforeOldest = yield* request("GET", `${bank(id)}/audit-logs?end_date=${encodeURIComponent(oldest)}`)
      assert.strictEqual(beforeOldest.body.total, 1)

      const badDate = yield* request("GET", `${bank(id)}/audit-logs?start_date=yesterday`)
      assert.strictEqual(badDate.status, 400)
      assert.include(badDate.body.detail, "start_date")
      const badLimit = yield* request("GET", `${bank(id)}/audit-logs?limit=0`)
      assert.strictEqual(badLimit.status, 400)
      assert.include(badLimit.body.detail, "limit")
      const badPeriod = yield* request("GET", `${bank(id)}/audit-logs/stats?period=2d`)
      assert.strictEqual(badPeriod.status, 400)
      assert.include(badPeriod.body.detail, "period")
      const missing = yield* request("GET", `${bank("audit-nobody")}/audit-logs`)
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "audit-nobody")
    }))

  it.effect("the stats count entries per action in every hourly or daily bucket of the period", () =>
    Effect.gen(function*() {
      const id = "audit-stats"
      yield* request("PUT", bank(id), {})
      yield* request("POST", `${bank(id)}/memories`, { items: [{ content: "A fact." }] })
      yield* request("POST", `${bank(id)}/memories`, { items: [{ content: "Another fact." }] })

      const day = yield* request("GET", `${bank(id)}/audit-logs/stats`)
      assert.strictEqual(day.status, 200, day.text)
      assert.strictEqual(day.body.period, "1d")
      assert.strictEqual(day.body.trunc, "hour")
      assert.strictEqual(day.body.buckets.length, 24)
      assert.strictEqual(day.body.start, day.body.buckets[0].time)
      // Summed over the buckets: the writes may straddle an hour boundary.
      assert.deepStrictEqual(countsOf(day.body.buckets), { "banks.put": 1, "memories.retain": 2 })
      assert.strictEqual(day.body.buckets.reduce((sum: number, bucket: any) => sum + bucket.total, 0), 3)

      const month = yield* request("GET", `${bank(id)}/audit-logs/stats?period=30d&action=memories.retain`)
      assert.strictEqual(month.body.trunc, "day")
      assert.strictEqual(month.body.buckets.length, 30)
      assert.deepStrictEqual(countsOf(month.body.buckets), { "memories.retain": 2 })
      assert.strictEqual(Date.parse(month.body.buckets[1].time) - Date.parse(month.body.buckets[0].time), 86_400_000)
    }))

  it.effect("a deleted bank's trail goes with it", () =>
    Effect.gen(function*() {
      const id = "audit-deleted"
      yield* request("PUT", bank(id), {})
      yield* request("POST", `${bank(id)}/directives`, { name: "Rule", content: "Be kind." })
      assert.strictEqual((yield* request("DELETE", bank(id))).status, 200)
      yield* request("PUT", bank(id), {})
      const listed = yield* request("GET", `${bank(id)}/audit-logs`)
      assert.deepStrictEqual(listed.body.items.map((entry: any) => entry.action), ["banks.put"])
    }))

  it.effect("MCP tool calls that may change the bank are written with transport mcp; reads are not", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const id = "audit-mcp"
      yield* request("PUT", bank(id), {})
      const mcp = yield* connectMcp(`${server.url}/mcp/${id}/`)
      yield* mcp.ok("retain", { content: secretText })
      yield* mcp.ok("list_memories", {})
      // Refused by the import's own checks (a call whose arguments do not decode never reaches the bank: not logged).
      const refused = yield* mcp.fails("import_bank_template", { manifest: { version: "1", bank: { chunk_sise: 1 } } })
      assert.include(refused, "bank.chunk_sise")
      const undecodable = yield* mcp.fails("import_bank_template", {
        manifest: { version: "1", bank: { retain_chunk_size: 1 } }
      })
      assert.include(undecodable, "retain_chunk_size")
      const exported = yield* mcp.ok("export_bank_template", {})
      assert.strictEqual(exported.version, "1")
      const imported = yield* mcp.ok("import_bank_template", {
        manifest: { version: "1", directives: [{ name: "Cite", content: "Cite sources." }] }
      })
      assert.deepStrictEqual(imported.directives_created, ["Cite"])
      const dry = yield* mcp.ok("import_bank_template", {
        manifest: { version: "1", directives: [{ name: "Cite", content: "Cite sources." }] },
        dry_run: true
      })
      assert.deepStrictEqual(dry.directives_updated, ["Cite"])
      assert.strictEqual(dry.dry_run, true)

      const logged = yield* mcp.ok("list_audit_logs", { transport: "mcp" })
      assert.deepStrictEqual(
        logged.items.map((entry: any) => [entry.action, entry.request.route, entry.response.status]),
        [
          ["import_bank_template", "/mcp/{bank_id}/", 200],
          ["import_bank_template", "/mcp/{bank_id}/", 200],
          ["import_bank_template", "/mcp/{bank_id}/", 400],
          ["retain", "/mcp/{bank_id}/", 200]
        ]
      )
      assert.notInclude(JSON.stringify(logged), secretText)
      const limited = yield* mcp.ok("list_audit_logs", { limit: 1, action: "retain" })
      assert.strictEqual(limited.total, 1)
      const badDate = yield* mcp.fails("list_audit_logs", { start_date: "soon" })
      assert.include(badDate, "start_date")

      const multi = yield* connectMcp(`${server.url}/mcp/`)
      yield* multi.ok("update_bank", { bank_id: id, name: "Audited" })
      const rest = yield* request("GET", `${bank(id)}/audit-logs?transport=mcp&action=update_bank`)
      assert.strictEqual(rest.body.items[0].request.route, "/mcp/")
    })))

  it.effect("the published client lists the audit log and its stats", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = createClient(createConfig({ baseUrl: server.url }))
      const id = "audit-client"
      yield* Effect.promise(() => sdk.createOrUpdateBank({ client, path: { bank_id: id }, body: { name: "Client" } }))
      yield* Effect.promise(() =>
        sdk.createDirective({ client, path: { bank_id: id }, body: { name: "Rule", content: "Be exact." } })
      )

      const listed = yield* Effect.promise(() =>
        sdk.listAuditLogs({ client, path: { bank_id: id }, query: { limit: 10, offset: 0, transport: "http" } })
      )
      assert.strictEqual(listed.response.status, 200)
      const page: Data<typeof sdk.listAuditLogs> = listed.data!
      assert.strictEqual(page.bank_id, id)
      assert.strictEqual(page.total, 2)
      assert.strictEqual(page.limit, 10)
      assert.strictEqual(page.offset, 0)
      const [newest] = page.items
      assert.strictEqual(newest!.action, "directives.create")
      assert.strictEqual(newest!.transport, "http")
      assert.strictEqual(newest!.bank_id, id)
      assert.isString(newest!.started_at)
      assert.isString(newest!.ended_at)
      assert.isNumber(newest!.duration_ms)
      assert.deepStrictEqual(newest!.request, { method: "POST", route: "/v1/default/banks/{bank_id}/directives" })
      assert.deepStrictEqual(newest!.response, { status: 200 })
      assert.deepStrictEqual(newest!.metadata, { actor: "anonymous" })

      const stats = yield* Effect.promise(() =>
        sdk.auditLogStats({ client, path: { bank_id: id }, query: { period: "7d", action: "directives.create" } })
      )
      assert.strictEqual(stats.response.status, 200)
      const chart: Data<typeof sdk.auditLogStats> = stats.data!
      assert.strictEqual(chart.bank_id, id)
      assert.strictEqual(chart.period, "7d")
      assert.strictEqual(chart.trunc, "day")
      assert.isString(chart.start)
      assert.strictEqual(chart.buckets.length, 7)
      assert.deepStrictEqual(countsOf(chart.buckets), { "directives.create": 1 })
      for (const bucket of chart.buckets) assert.isString(bucket.time)

      const bad = yield* Effect.promise(() =>
        sdk.listAuditLogs({ client, path: { bank_id: id }, query: { end_date: "not-a-date" } })
      )
      assert.strictEqual(bad.response.status, 400)
      assert.include((bad.error as unknown as { detail: string }).detail, "end_date")
      const badStats = yield* Effect.promise(() =>
        sdk.auditLogStats({ client, path: { bank_id: id }, query: { period: "1y" } })
      )
      assert.strictEqual(badStats.response.status, 400)
      assert.include((badStats.error as unknown as { detail: string }).detail, "period")
    }))
})

const key = "k-audit-0123456789"
const fingerprint = `key:${createHash("sha256").update(key).digest("hex").slice(0, 12)}`

layer(testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)) }), {
  excludeTestServices: true
})("audit logs with API keys", (it) => {
  it.effect("the actor is the key's fingerprint, never the key; a request with a wrong key is refused and not logged", () =>
    Effect.gen(function*() {
      const auth = { authorization: `Bearer ${key}` }
      const id = "audit-keyed"
      assert.strictEqual((yield* request("PUT", bank(id), {}, auth)).status, 200)
      const wrong = yield* request("POST", `${bank(id)}/directives`, { name: "x", content: "y" }, {
        authorization: "Bearer not-the-key"
      })
      assert.strictEqual(wrong.status, 401)
      const listed = yield* request("GET", `${bank(id)}/audit-logs`, undefined, auth)
      assert.strictEqual(listed.status, 200, listed.text)
      assert.deepStrictEqual(listed.body.items.map((entry: any) => [entry.action, entry.metadata.actor]), [
        ["banks.put", fingerprint]
      ])
      assert.notInclude(listed.text, key)
      assert.notInclude(listed.text, "not-the-key")
      const anonymous = yield* request("GET", `${bank(id)}/audit-logs`)
      assert.strictEqual(anonymous.status, 401)
    }))
})

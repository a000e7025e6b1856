/**
 * Bank templates, the deprecated background and the language-model check over the real HTTP server, through plain
 * requests and through the published Hindsight client (`@vectorize-io/hindsight-client` 0.9.1): a template exports
 * every override, directive and mental model and imports into another bank to the same export; an import with a bad
 * field is a 400 naming it and changes nothing; a dry run writes nothing; the background appends to the mission once;
 * the LLM check answers `not_configured` offline and probes a configured model once per distinct model.
 */
import { assert, layer } from "@effect/vitest"
import type { BankTemplateImportResponse, BankTemplateManifest } from "@vectorize-io/hindsight-client"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { Effect } from "effect"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

/** What an operation of the published client answers with on success, as its types declare it. */
type Data<F extends (...args: any) => any> = NonNullable<Awaited<ReturnType<F>>["data"]>

/** engram's 4xx body: `detail` names the field and the reason (the client's types expect FastAPI's list). */
const detailOf = (error: unknown) => (error as { readonly detail: string }).detail

const hindsight = Effect.map(TestServer, (server) => createClient(createConfig({ baseUrl: server.url })))

/** A source bank with settings, two directives and a mental model. */
const seed = (id: string) =>
  Effect.gen(function*() {
    const put = yield* request("PUT", bank(id), {
      reflect_mission: "Assist the platform team.",
      retain_mission: "Keep decisions and their reasons.",
      retain_chunk_size: 1200,
      disposition: { skepticism: 4, literalism: 2, empathy: 5 },
      enable_entity_trajectories: true,
      dream: { enabled: true, top_k: 3 }
    })
    assert.strictEqual(put.status, 200, put.text)
    for (
      const directive of [
        { name: "Cite sources", content: "Say which memory a claim comes from.", priority: 5, tags: ["answers"] },
        { name: "Be brief", content: "Answer in three sentences at most.", is_active: false }
      ]
    ) {
      const created = yield* request("POST", `${bank(id)}/directives`, directive)
      assert.strictEqual(created.status, 200, created.text)
    }
    const model = yield* request("POST", `${bank(id)}/mental-models`, {
      id: "team-preferences",
      name: "Team preferences",
      source_query: "What does the team prefer?",
      tags: ["team"],
      max_tokens: 1024,
      trigger: { mode: "delta", refresh_after_consolidation: true }
    })
    assert.strictEqual(model.status, 200, model.text)
  })

layer(testApp(), { excludeTestServices: true })("bank templates", (it) => {
  it.effect("an export carries every override, directive and mental model, and imports into another bank to the same export", () =>
    Effect.gen(function*() {
      yield* seed("tpl-source")
      const exported = yield* request("GET", `${bank("tpl-source")}/export`)
      assert.strictEqual(exported.status, 200, exported.text)
      const manifest = exported.body
      assert.strictEqual(manifest.version, "1")
      assert.deepStrictEqual(manifest.bank, {
        reflect_mission: "Assist the platform team.",
        retain_mission: "Keep decisions and their reasons.",
        retain_chunk_size: 1200,
        enable_entity_trajectories: true,
        dream: { enabled: true, top_k: 3 },
        disposition_skepticism: 4,
        disposition_literalism: 2,
        disposition_empathy: 5
      })
      assert.deepStrictEqual(manifest.directives, [
        {
          name: "Cite sources",
          content: "Say which memory a claim comes from.",
          priority: 5,
          is_active: true,
          tags: ["answers"]
        },
        { name: "Be brief", content: "Answer in three sentences at most.", priority: 0, is_active: false, tags: [] }
      ])
      assert.deepStrictEqual(manifest.mental_models, [{
        id: "team-preferences",
        name: "Team preferences",
        source_query: "What does the team prefer?",
        tags: ["team"],
        max_tokens: 1024,
        trigger: { mode: "delta", refresh_after_consolidation: true, keep_trace: false, response_schema: null }
      }])

      const imported = yield* request("POST", `${bank("tpl-copy")}/import`, manifest)
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.bank_id, "tpl-copy")
      assert.strictEqual(imported.body.config_applied, true)
      assert.strictEqual(imported.body.dry_run, false)
      assert.deepStrictEqual(imported.body.mental_models_created, ["team-preferences"])
      assert.deepStrictEqual(imported.body.mental_models_updated, [])
      assert.deepStrictEqual(imported.body.directives_created, ["Cite sources", "Be brief"])
      assert.deepStrictEqual(imported.body.directives_updated, [])
      assert.strictEqual(imported.body.operation_ids.length, 1)
      const operation = yield* request("GET", `${bank("tpl-copy")}/operations/${imported.body.operation_ids[0]}`)
      assert.strictEqual(operation.status, 200, operation.text)

      const copy = yield* request("GET", `${bank("tpl-copy")}/export`)
      assert.deepStrictEqual(copy.body, manifest)

      // Re-importing matches by name and id: everything is updated, nothing duplicated, and the unchanged query
      // keeps the content it has (no refresh).
      const again = yield* request("POST", `${bank("tpl-copy")}/import`, manifest)
      assert.strictEqual(again.status, 200, again.text)
      assert.deepStrictEqual(again.body.mental_models_updated, ["team-preferences"])
      assert.deepStrictEqual(again.body.directives_updated, ["Cite sources", "Be brief"])
      assert.deepStrictEqual(again.body.directives_created, [])
      assert.deepStrictEqual(again.body.operation_ids, [])
      const listed = yield* request("GET", `${bank("tpl-copy")}/directives?active_only=false`)
      assert.strictEqual(listed.body.total, 2)
    }))

  it.effect("an import updates what it names and leaves the rest; a changed query regenerates the model", () =>
    Effect.gen(function*() {
      yield* seed("tpl-partial")
      const imported = yield* request("POST", `${bank("tpl-partial")}/import`, {
        version: "1",
        bank: { retain_mission: "Keep only decisions." },
        mental_models: [{
          id: "team-preferences",
          name: "Team preferences",
          source_query: "What does the team avoid?"
        }],
        directives: [{ name: "Be brief", content: "Two sentences.", is_active: true }]
      })
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.operation_ids.length, 1)
      const exported = (yield* request("GET", `${bank("tpl-partial")}/export`)).body
      assert.strictEqual(exported.bank.retain_mission, "Keep only decisions.")
      assert.strictEqual(exported.bank.reflect_mission, "Assist the platform team.")
      assert.deepStrictEqual(exported.directives[1], {
        name: "Be brief",
        content: "Two sentences.",
        priority: 0,
        is_active: true,
        tags: []
      })
      assert.strictEqual(exported.mental_models[0].source_query, "What does the team avoid?")
      // Fields the template leaves out keep their values.
      assert.deepStrictEqual(exported.mental_models[0].tags, ["team"])
      assert.deepStrictEqual(exported.mental_models[0].trigger, {
        mode: "delta",
        refresh_after_consolidation: true,
        keep_trace: false,
        response_schema: null
      })
    }))

  it.effect("a bad manifest is a 400 naming each bad field, and changes nothing", () =>
    Effect.gen(function*() {
      yield* seed("tpl-guarded")
      const before = (yield* request("GET", `${bank("tpl-guarded")}/export`)).body
      const valid = {
        version: "1",
        bank: { reflect_mission: "Changed." },
        directives: [{ name: "New rule", content: "Never guess." }],
        mental_models: [{ id: "fresh", name: "Fresh", source_query: "What is new?" }]
      }
      const cases: Array<[unknown, string]> = [
        [{ ...valid, version: "2" }, "version"],
        [{ ...valid, bank: { reflect_misson: "typo" } }, "bank.reflect_misson"],
        [{ ...valid, bank: { retain_chunk_size: 3 } }, "bank.retain_chunk_size"],
        [{ ...valid, bank: { disposition_empathy: 9 } }, "bank.disposition_empathy"],
        [{ ...valid, mental_models: [{ id: "Not An Id", name: "x", source_query: "y" }] }, "mental_models.0.id"],
        [{ ...valid, mental_models: [valid.mental_models[0], valid.mental_models[0]] }, "mental_models.1.id"],
        [{ ...valid, directives: [{ name: "a", content: " " }] }, "directives.0.content"],
        [{ ...valid, directives: [valid.directives[0], valid.directives[0]] }, "directives.1.name"],
        [{ ...valid, directives: [{ name: "a", content: "b", priority: 2 ** 40 }] }, "directives.0.priority"]
      ]
      for (const [manifest, field] of cases) {
        const refused = yield* request("POST", `${bank("tpl-guarded")}/import`, manifest)
        assert.strictEqual(refused.status, 400, `${field}: ${refused.text}`)
        assert.include(refused.body.detail, field)
      }
      const after = (yield* request("GET", `${bank("tpl-guarded")}/export`)).body
      assert.deepStrictEqual(after, before)
      // Nothing was created in a bank that did not exist either.
      const refused = yield* request("POST", `${bank("tpl-never")}/import`, { ...valid, version: "0" })
      assert.strictEqual(refused.status, 400)
      assert.strictEqual((yield* request("GET", `${bank("tpl-never")}/config`)).status, 404)
    }))

  it.effect("a dry run reports what an import would do and writes nothing", () =>
    Effect.gen(function*() {
      yield* seed("tpl-dry-source")
      const manifest = (yield* request("GET", `${bank("tpl-dry-source")}/export`)).body
      const dry = yield* request("POST", `${bank("tpl-dry")}/import?dry_run=true`, manifest)
      assert.strictEqual(dry.status, 200, dry.text)
      assert.strictEqual(dry.body.dry_run, true)
      assert.deepStrictEqual(dry.body.mental_models_created, ["team-preferences"])
      assert.deepStrictEqual(dry.body.directives_created, ["Cite sources", "Be brief"])
      assert.deepStrictEqual(dry.body.operation_ids, [])
      assert.strictEqual((yield* request("GET", `${bank("tpl-dry")}/config`)).status, 404)
      const invalid = yield* request("POST", `${bank("tpl-dry")}/import?dry_run=true`, {
        version: "1",
        bank: { nope: 1 }
      })
      assert.strictEqual(invalid.status, 400)
      assert.include(invalid.body.detail, "bank.nope")
    }))

  it.effect("settings only Hindsight has are accepted and ignored; the export of an unknown bank is a 404", () =>
    Effect.gen(function*() {
      const imported = yield* request("POST", `${bank("tpl-hindsight")}/import`, {
        version: "1",
        bank: { reflect_mission: "From Hindsight.", retain_strategies: { fast: {} }, audit_log_enabled: true },
        mental_models: null,
        directives: null
      })
      assert.strictEqual(imported.status, 200, imported.text)
      const exported = (yield* request("GET", `${bank("tpl-hindsight")}/export`)).body
      assert.strictEqual(exported.bank.reflect_mission, "From Hindsight.")
      assert.notProperty(exported.bank, "retain_strategies")
      const missing = yield* request("GET", `${bank("tpl-nobody")}/export`)
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "tpl-nobody")
    }))

  it.effect("the manifest's JSON Schema names its parts", () =>
    Effect.gen(function*() {
      const schema = yield* request("GET", "/v1/bank-template-schema")
      assert.strictEqual(schema.status, 200, schema.text)
      assert.includeMembers(Object.keys(schema.body.properties), ["version", "bank", "mental_models", "directives"])
      assert.deepStrictEqual(schema.body.required, ["version"])
    }))

  it.effect("the background is appended to the mission once; an empty one is a 400", () =>
    Effect.gen(function*() {
      const first = yield* request("POST", `${bank("bg")}/background`, { content: "Alice is a data engineer." })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(first.body.mission, "Alice is a data engineer.")
      assert.strictEqual(first.body.background, "Alice is a data engineer.")
      assert.deepStrictEqual(first.body.disposition, { skepticism: 3, literalism: 3, empathy: 3 })
      const second = yield* request("POST", `${bank("bg")}/background`, {
        content: "She works in Berlin.",
        update_disposition: true
      })
      assert.strictEqual(second.body.mission, "Alice is a data engineer.\n\nShe works in Berlin.")
      const repeated = yield* request("POST", `${bank("bg")}/background`, { content: "She works in Berlin." })
      assert.strictEqual(repeated.body.mission, second.body.mission)
      const profile = yield* request("GET", `${bank("bg")}/profile`)
      assert.strictEqual(profile.body.mission, second.body.mission)
      const empty = yield* request("POST", `${bank("bg")}/background`, { content: "  " })
      assert.strictEqual(empty.status, 400)
      assert.include(empty.body.detail, "content")
    }))

  it.effect("with no language model every operation answers not_configured; an unknown bank is a 404", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("llm-offline"), {})
      const health = yield* request("POST", `${bank("llm-offline")}/health/llm`)
      assert.strictEqual(health.status, 200, health.text)
      assert.deepStrictEqual(health.body, {
        bank_id: "llm-offline",
        operations: ["retain", "consolidation", "reflect"].map((operation) => ({
          operation,
          ok: false,
          status: "not_configured",
          latency_ms: null
        }))
      })
      const missing = yield* request("POST", `${bank("llm-nobody")}/health/llm`)
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "llm-nobody")
    }))

  it.effect("the published client drives export, import, schema, background and the LLM check", () =>
    Effect.gen(function*() {
      const client = yield* hindsight
      yield* seed("client-source")
      const exported = yield* Effect.promise(() =>
        sdk.exportBankTemplate({ client, path: { bank_id: "client-source" } })
      )
      assert.strictEqual(exported.response.status, 200)
      const manifest: BankTemplateManifest = exported.data!
      assert.strictEqual(manifest.version, "1")
      assert.strictEqual(manifest.bank?.reflect_mission, "Assist the platform team.")
      assert.strictEqual(manifest.bank?.disposition_skepticism, 4)
      assert.strictEqual(manifest.mental_models?.[0]?.source_query, "What does the team prefer?")
      assert.strictEqual(manifest.directives?.[0]?.name, "Cite sources")

      // The client's types give the import no body (the server reads the manifest from it): pass it untyped.
      const imported = yield* Effect.promise(() =>
        sdk.importBankTemplate({ client, path: { bank_id: "client-copy" }, body: manifest as never })
      )
      assert.strictEqual(imported.response.status, 200, JSON.stringify(imported.error))
      const result: BankTemplateImportResponse = imported.data!
      assert.strictEqual(result.bank_id, "client-copy")
      assert.strictEqual(result.config_applied, true)
      assert.deepStrictEqual(result.mental_models_created, ["team-preferences"])
      assert.deepStrictEqual(result.directives_created, ["Cite sources", "Be brief"])
      assert.strictEqual(result.dry_run, false)

      const dry = yield* Effect.promise(() =>
        sdk.importBankTemplate({
          client,
          path: { bank_id: "client-dry" },
          query: { dry_run: true },
          body: manifest as never
        })
      )
      assert.strictEqual(dry.data?.dry_run, true)

      const bad = yield* Effect.promise(() =>
        sdk.importBankTemplate({
          client,
          path: { bank_id: "client-copy" },
          body: { version: "1", bank: { retain_chunk_size: "big" } } as never
        })
      )
      assert.strictEqual(bad.response.status, 400)
      assert.include(detailOf(bad.error), "bank.retain_chunk_size")

      const schema = yield* Effect.promise(() => sdk.getBankTemplateSchema({ client }))
      assert.strictEqual(schema.response.status, 200)
      assert.property((schema.data as { properties: object }).properties, "mental_models")

      const background = yield* Effect.promise(() =>
        sdk.addBankBackground({ client, path: { bank_id: "client-source" }, body: { content: "Runs on Kubernetes." } })
      )
      assert.strictEqual(background.response.status, 200)
      const profile: Data<typeof sdk.addBankBackground> = background.data!
      assert.strictEqual(profile.mission, "Assist the platform team.\n\nRuns on Kubernetes.")
      assert.strictEqual(profile.background, profile.mission)
      assert.deepStrictEqual(profile.disposition, { skepticism: 4, literalism: 2, empathy: 5 })
      const emptyBackground = yield* Effect.promise(() =>
        sdk.addBankBackground({ client, path: { bank_id: "client-source" }, body: { content: "" } })
      )
      assert.strictEqual(emptyBackground.response.status, 400)
      assert.include(detailOf(emptyBackground.error), "content")

      const health = yield* Effect.promise(() => sdk.testBankLlm({ client, path: { bank_id: "client-source" } }))
      assert.strictEqual(health.response.status, 200)
      const report: Data<typeof sdk.testBankLlm> = health.data!
      assert.strictEqual(report.bank_id, "client-source")
      assert.deepStrictEqual(report.operations.map((entry) => [entry.operation, entry.ok, entry.status]), [
        ["retain", false, "not_configured"],
        ["consolidation", false, "not_configured"],
        ["reflect", false, "not_configured"]
      ])
      const unknown = yield* Effect.promise(() => sdk.testBankLlm({ client, path: { bank_id: "client-nobody" } }))
      assert.strictEqual(unknown.response.status, 404)
      assert.include(detailOf(unknown.error), "client-nobody")
    }))
})

const apiKey = "sk-probe-secret-0123"

/** Retain and reflect share one model (probed once); consolidation has its own. */
const models = scriptedModels((server) =>
  llmSettings({
    provider: "openai",
    baseUrl: server.baseUrl,
    apiKey,
    model: "shared-model",
    purposes: { consolidation: { provider: "openai", baseUrl: server.baseUrl, apiKey, model: "consolidation-model" } },
    maxRetries: 3,
    retryBase: "5 millis",
    timeout: "1 second"
  })
)

const withModels = scriptedApp({}, models)

layer(withModels, { excludeTestServices: true })("the LLM check with configured models", (it) => {
  const check = Effect.gen(function*() {
    const scripted = yield* Scripted
    const before = scripted.chatRequests().length
    const health = yield* request("POST", `${bank("llm-live")}/health/llm`)
    assert.strictEqual(health.status, 200, health.text)
    // Status only: never the provider, the model, the endpoint or the key.
    for (const secret of [apiKey, "shared-model", "consolidation-model", "127.0.0.1", "openai"]) {
      assert.notInclude(health.text, secret)
    }
    return { health: health.body, sent: scripted.chatRequests().length - before }
  })

  it.effect("one minimal request per distinct model; connected with its latency", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      yield* request("PUT", bank("llm-live"), {})
      scripted.setFallback({ content: "ok" })
      const { health, sent } = yield* check
      assert.strictEqual(sent, 2)
      for (const entry of health.operations) {
        assert.strictEqual(entry.status, "connected", entry.operation)
        assert.strictEqual(entry.ok, true)
        assert.isAtLeast(entry.latency_ms, 0)
      }
      const probe = scripted.chatRequests().at(-1)!
      assert.isAtMost(probe.body.max_tokens ?? probe.body.max_completion_tokens, 16)
    }))

  it.effect("a refused key is auth_failed and an outage unreachable, without retries; a stalled model times out", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      yield* request("PUT", bank("llm-live"), {})
      scripted.setFallback({ status: 401, body: { error: { message: `bad key ${apiKey}` } } })
      const refused = yield* check
      assert.strictEqual(refused.sent, 2)
      assert.deepStrictEqual(refused.health.operations.map((entry: any) => entry.status), [
        "auth_failed",
        "auth_failed",
        "auth_failed"
      ])
      assert.isFalse(refused.health.operations[0].ok)

      scripted.setFallback({ status: 503 })
      const down = yield* check
      assert.strictEqual(down.sent, 2, "a probe is not retried")
      assert.deepStrictEqual(down.health.operations.map((entry: any) => entry.status), [
        "unreachable",
        "unreachable",
        "unreachable"
      ])

      scripted.setFallback({ hang: true })
      const stalled = yield* check
      assert.deepStrictEqual(stalled.health.operations.map((entry: any) => entry.status), [
        "timeout",
        "timeout",
        "timeout"
      ])
      assert.isAtLeast(stalled.health.operations[0].latency_ms, 900)
    }))
})

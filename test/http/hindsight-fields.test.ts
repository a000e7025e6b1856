/**
 * The Hindsight 0.9 fields and operations over HTTP, offline: the bank's pipeline switches go through the config
 * routes and change what recall and retain do (a strategy turned off does not run; memory defense redacts and
 * blocks secrets), `last_write_at` moves with writes, `source_facts_truncated` says when a budget cut source facts,
 * mental models clear and dry-run (which writes nothing) and keep their trace, a failed consolidation is
 * recovered, and a finished operation's record is deleted while a pending or running one is refused.
 * Bad input is a 400 (or 404/409) with `detail` naming the field, and changes nothing. The last test drives the
 * new operations and fields through the published Hindsight client 0.9.1 itself.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  createClient,
  createConfig,
  HindsightClient,
  type MentalModelDryRunRefreshResult,
  type MentalModelResponse,
  sdk
} from "@vectorize-io/hindsight-client"
import { OperationStore } from "../../src/bank/OperationStore.ts"
import { bankPath, call, ok, operationFinished, settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const fieldsOf = (body: any): Array<string> => body.errors.map((error: any) => error.field)

const retainAll = (bank: string, contents: ReadonlyArray<string>) =>
  ok("POST", `${bankPath(bank)}/memories`, { items: contents.map((content) => ({ content })) })

const facts = [
  "Alice Novak works at Acme Corp as a data engineer since March 2024.",
  "Alice Novak adopted a rescue dog called Biscuit in March 2024.",
  "Bob Stone painted the lake at sunrise with Alice Novak.",
  "Bob Stone is training for the Lisbon marathon."
]

layer(testApp({ enableObservations: true }), { excludeTestServices: true })("hindsight 0.9 fields", (it) => {
  it.effect("bank config: the new fields default to today's behaviour, PATCH sets them, bad values are 400 and change nothing", () =>
    Effect.gen(function*() {
      const bank = "hs-config"
      yield* ok("PUT", bankPath(bank), {})
      const before = (yield* ok("GET", `${bankPath(bank)}/config`)).body
      assert.include(before.config, {
        enable_graph_retrieval: true,
        enable_temporal_retrieval: true,
        enable_reranking: true,
        enable_auto_consolidation: true,
        recall_max_tokens: 4096,
        recall_include_chunks: false
      })
      assert.isNull(before.config.memory_defense)
      assert.notProperty(before.overrides, "enable_graph_retrieval")

      for (
        const [body, field] of [
          [{ updates: { enable_graph_retrieval: "no" } }, "updates.enable_graph_retrieval"],
          [{ recall_max_tokens: 0 }, "recall_max_tokens"],
          [{ recall_include_chunks: 3 }, "recall_include_chunks"],
          [{ memory_defense: { rules: [{ on: "prompt_injection", action: "block" }] } }, "memory_defense.rules.0.on"],
          [{ memory_defense: { rules: [{ on: "sensitive_data", action: "shred" }] } }, "memory_defense.rules.0.action"],
          [{ memory_defense: "on" }, "memory_defense"]
        ] as const
      ) {
        const refused = yield* call("PATCH", `${bankPath(bank)}/config`, body)
        assert.strictEqual(refused.status, 400, refused.text)
        assert.isString(refused.body.detail)
        assert.include(fieldsOf(refused.body), field, refused.text)
      }
      assert.deepStrictEqual((yield* ok("GET", `${bankPath(bank)}/config`)).body, before)

      const policy = { enabled: true, rules: [{ on: "sensitive_data", action: "redact" }] }
      const patched = (yield* ok("PATCH", `${bankPath(bank)}/config`, {
        updates: { enable_graph_retrieval: false, recall_max_tokens: 512, memory_defense: policy }
      })).body
      assert.include(patched.config, { enable_graph_retrieval: false, recall_max_tokens: 512, enable_reranking: true })
      assert.deepStrictEqual(patched.config.memory_defense, policy)
      assert.deepStrictEqual(patched.overrides.memory_defense, policy)
      assert.strictEqual(patched.overrides.enable_graph_retrieval, false)
      // Null and absent leave a setting as it is; DELETE config puts every one back.
      const kept = (yield* ok("PATCH", `${bankPath(bank)}/config`, { enable_graph_retrieval: null })).body
      assert.strictEqual(kept.config.enable_graph_retrieval, false)
      const reset = (yield* ok("DELETE", `${bankPath(bank)}/config`)).body
      assert.strictEqual(reset.config.enable_graph_retrieval, true)
      assert.isNull(reset.config.memory_defense)
    }))

  it.effect("recall: graph, temporal and reranking switches turn their step off (the trace shows it); budget and chunk defaults", () =>
    Effect.gen(function*() {
      const bank = "hs-recall"
      yield* ok("PUT", bankPath(bank), { enable_observations: false })
      yield* retainAll(bank, facts)
      yield* settled(bank)
      const recall = (body: Record<string, unknown>) =>
        Effect.map(ok("POST", `${bankPath(bank)}/memories/recall`, body), (r) => r.body)
      const query = "What did Alice Novak do in March 2024?"

      const full = yield* recall({ query, trace: true })
      assert.includeMembers(Object.keys(full.trace.strategies), ["semantic", "keyword", "graph", "temporal"])
      assert.deepStrictEqual(full.trace.strategies_disabled, [])
      assert.isNotNull(full.trace.time_window)
      assert.isNull(full.chunks)
      assert.notProperty(full, "source_facts_truncated")

      yield* ok("PATCH", `${bankPath(bank)}/config`, { enable_graph_retrieval: false })
      const noGraph = yield* recall({ query, trace: true })
      assert.notProperty(noGraph.trace.strategies, "graph")
      assert.deepStrictEqual(noGraph.trace.strategies_disabled, ["graph"])
      assert.property(noGraph.trace.strategies, "temporal")
      assert.isAbove(noGraph.results.length, 0)

      yield* ok("PATCH", `${bankPath(bank)}/config`, { enable_temporal_retrieval: false, enable_reranking: false })
      const bare = yield* recall({ query, trace: true })
      assert.deepStrictEqual(Object.keys(bare.trace.strategies).sort(), ["keyword", "semantic"])
      assert.deepStrictEqual(bare.trace.strategies_disabled, ["temporal", "graph"])
      assert.isNull(bare.trace.time_window)
      assert.deepStrictEqual(bare.trace.reranker, { model: "none" })
      // Without reranking each score is the fused score relative to the best, in that order.
      const scores = bare.results.map((result: any) => result.score)
      assert.strictEqual(scores[0], 1)
      assert.deepStrictEqual(scores, [...scores].sort((a: number, b: number) => b - a))

      yield* ok("DELETE", `${bankPath(bank)}/config`)
      const wide = yield* recall({ query: "Alice Novak Bob Stone" })
      yield* ok("PATCH", `${bankPath(bank)}/config`, { recall_max_tokens: 20, recall_include_chunks: true })
      const narrow = yield* recall({ query: "Alice Novak Bob Stone" })
      assert.isBelow(narrow.results.length, wide.results.length)
      assert.isAbove(narrow.results.length, 0)
      assert.isAbove(Object.keys(narrow.chunks).length, 0)
      // The request still decides when it says: its own budget, and no chunks when it asks for none.
      const explicit = yield* recall({ query: "Alice Novak Bob Stone", max_tokens: 4096, include: { chunks: null } })
      assert.strictEqual(explicit.results.length, wide.results.length)
      assert.isNull(explicit.chunks)
    }))

  it.effect("last_write_at on lists and stats moves when something is stored", () =>
    Effect.gen(function*() {
      const bank = "hs-writes"
      // No consolidation: its observations are writes too, and would move the mark between the two reads.
      yield* ok("PUT", bankPath(bank), { enable_observations: false })
      const listed = (yield* ok("GET", "/v1/default/banks")).body.banks.find((b: any) => b.bank_id === bank)
      assert.isNull(listed.last_write_at)
      const empty = (yield* ok("GET", `${bankPath(bank)}/stats`)).body
      assert.isNull(empty.last_write_at)
      assert.isNull(empty.last_memory_write_at)
      yield* retainAll(bank, facts.slice(0, 1))
      const after = (yield* ok("GET", "/v1/default/banks")).body.banks.find((b: any) => b.bank_id === bank)
      assert.isString(after.last_write_at)
      assert.isTrue(Date.parse(after.last_write_at) >= Date.parse(listed.created_at))
      const stats = (yield* ok("GET", `${bankPath(bank)}/stats`)).body
      assert.strictEqual(stats.last_write_at, after.last_write_at)
      assert.isString(stats.last_memory_write_at)
    }))

  it.effect("memory defense: redact stores markers, block drops items, all blocked is a 400 storing nothing", () =>
    Effect.gen(function*() {
      const bank = "hs-defense"
      const key = "AKIA" + "IOSFODNN7EXAMPLE"
      const token = "ghp_" + "a".repeat(36)
      yield* ok("PUT", bankPath(bank), {
        enable_observations: false,
        memory_defense: { enabled: true, rules: [{ on: "sensitive_data", action: "redact" }] }
      })
      yield* ok("POST", `${bankPath(bank)}/memories`, {
        items: [{ content: `The deploy user Carol uses the AWS key ${key} for the staging bucket.` }]
      })
      const stored = (yield* ok("GET", `${bankPath(bank)}/memories/list`)).body.items
      assert.isAbove(stored.length, 0)
      assert.isFalse(JSON.stringify(stored).includes(key))
      assert.isTrue(
        stored.some((memory: any) => memory.text.includes("[REDACTED:aws_access_key]")),
        JSON.stringify(stored)
      )

      yield* ok("PATCH", `${bankPath(bank)}/config`, {
        memory_defense: { rules: [{ on: "sensitive_data", action: "block" }] }
      })
      const before = (yield* ok("GET", `${bankPath(bank)}/memories/list`)).body.total
      yield* ok("POST", `${bankPath(bank)}/memories`, {
        items: [{ content: `Dave's GitHub token is ${token}.` }, { content: "Dave prefers tea over coffee." }]
      })
      const mixed = (yield* ok("GET", `${bankPath(bank)}/memories/list`)).body
      assert.isAbove(mixed.total, before)
      assert.isFalse(JSON.stringify(mixed.items).includes(token))
      assert.isTrue(mixed.items.some((memory: any) => memory.text.includes("tea")))

      for (const async of [false, true]) {
        const refused = yield* call("POST", `${bankPath(bank)}/memories`, {
          items: [{ content: `token ${token}` }],
          async
        })
        assert.strictEqual(refused.status, 400, refused.text)
        assert.deepStrictEqual(fieldsOf(refused.body), ["items"])
        assert.include(refused.body.detail, "github_token")
      }
      assert.strictEqual((yield* ok("GET", `${bankPath(bank)}/memories/list`)).body.total, mixed.total)
    }))

  it.effect("enable_auto_consolidation off leaves facts waiting; a failed consolidation is recovered", () =>
    Effect.gen(function*() {
      const bank = "hs-recover"
      const store = yield* OperationStore
      yield* ok("PUT", bankPath(bank), { enable_auto_consolidation: false })
      yield* retainAll(bank, facts)
      yield* settled(bank)
      const waiting = (yield* ok("GET", `${bankPath(bank)}/stats`)).body
      assert.isAbove(waiting.pending_consolidation, 0)
      assert.strictEqual(waiting.total_observations, 0)
      const queued = (yield* ok("GET", `${bankPath(bank)}/operations?task_type=consolidate`)).body
      assert.strictEqual(queued.total, 0)

      assert.deepStrictEqual((yield* ok("POST", `${bankPath(bank)}/consolidation/recover`)).body, { retried_count: 0 })
      assert.strictEqual((yield* call("POST", `${bankPath("hs-no-such-bank")}/consolidation/recover`)).status, 404)

      // A consolidation that failed after exhausting its retries.
      const failed = yield* store.create({ bankId: bank, taskType: "consolidate", payload: { trigger: "manual" } })
      const claimed = yield* store.claimNext(bank)
      assert.strictEqual(Option.getOrNull(claimed)?.id, failed.id)
      yield* store.fail(failed.id, "the language model failed during consolidation")

      const recovered = (yield* ok("POST", `${bankPath(bank)}/consolidation/recover`)).body
      assert.strictEqual(recovered.retried_count, waiting.pending_consolidation)
      yield* settled(bank)
      const done = (yield* ok("GET", `${bankPath(bank)}/stats`)).body
      assert.strictEqual(done.pending_consolidation, 0)
      assert.isAbove(done.total_observations, 0)
      assert.deepStrictEqual((yield* ok("POST", `${bankPath(bank)}/consolidation/recover`)).body, { retried_count: 0 })

      // Observations now exist: a tiny source-facts budget says it cut some, an unlimited one that it did not.
      const recall = (maxTokens: number) =>
        Effect.map(
          ok("POST", `${bankPath(bank)}/memories/recall`, {
            query: "Alice Novak",
            types: ["observation"],
            include: { source_facts: { max_tokens: maxTokens } }
          }),
          (r) => r.body
        )
      const cut = yield* recall(1)
      assert.isAbove(cut.results.length, 0)
      assert.strictEqual(cut.source_facts_truncated, true)
      const whole = yield* recall(-1)
      assert.strictEqual(whole.source_facts_truncated, false)
      assert.isAbove(Object.keys(whole.source_facts).length, 0)
    }))

  it.effect("operations: a finished record is deleted; pending and running ones are refused with 409 naming the state", () =>
    Effect.gen(function*() {
      const bank = "hs-operations"
      const store = yield* OperationStore
      yield* ok("PUT", bankPath(bank), {})
      const running = yield* store.create({ bankId: bank, taskType: "hs_hold", payload: {} })
      yield* store.claimNext(bank)
      const pending = yield* store.create({ bankId: bank, taskType: "hs_hold", payload: {} })
      const path = (id: string) => `${bankPath(bank)}/operations/${id}/delete`

      const refusedRunning = yield* call("DELETE", path(running.id))
      assert.strictEqual(refusedRunning.status, 409, refusedRunning.text)
      assert.include(refusedRunning.body.detail, "running")
      const refusedPending = yield* call("DELETE", path(pending.id))
      assert.strictEqual(refusedPending.status, 409)
      assert.include(refusedPending.body.detail, "pending")
      assert.strictEqual((yield* ok("GET", `${bankPath(bank)}/operations/${pending.id}`)).body.status, "pending")
      const unknown = yield* call("DELETE", path("no-such-operation"))
      assert.strictEqual(unknown.status, 404)
      assert.isString(unknown.body.detail)

      yield* store.fail(running.id, "gave up")
      yield* ok("DELETE", `${bankPath(bank)}/operations/${pending.id}`)
      for (const id of [running.id, pending.id]) {
        const deleted = (yield* ok("DELETE", path(id))).body
        assert.deepStrictEqual(deleted, { success: true, message: `operation '${id}' deleted`, operation_id: id })
        assert.strictEqual((yield* ok("GET", `${bankPath(bank)}/operations/${id}`)).body.status, "not_found")
        assert.strictEqual((yield* call("DELETE", path(id))).status, 404)
      }
    }))

  it.effect("mental models: clear, a dry run that writes nothing, keep_trace and response_schema", () =>
    Effect.gen(function*() {
      const bank = "hs-models"
      const models = `${bankPath(bank)}/mental-models`
      yield* ok("PUT", bankPath(bank), { enable_observations: false })
      yield* retainAll(bank, facts)
      yield* settled(bank)

      const refused = yield* call("POST", models, {
        name: "Alice",
        source_query: "What do we know about Alice?",
        trigger: { response_schema: { type: "array", contains: { type: "string" } } }
      })
      assert.strictEqual(refused.status, 400, refused.text)
      assert.deepStrictEqual(fieldsOf(refused.body), ["trigger.response_schema"])
      assert.strictEqual((yield* ok("GET", models)).body.items.length, 0)

      const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] }
      const created = (yield* ok("POST", models, {
        id: "alice",
        name: "Alice",
        source_query: "What do we know about Alice Novak?",
        trigger: { mode: "delta", keep_trace: true, response_schema: schema }
      })).body
      yield* operationFinished(bank, created.operation_id)
      const model = (yield* ok("GET", `${models}/alice`)).body
      assert.deepStrictEqual(model.trigger, {
        mode: "delta",
        refresh_after_consolidation: false,
        keep_trace: true,
        response_schema: schema
      })
      assert.notStrictEqual(model.content, "")
      // Offline, the refresh is today's deterministic synthesis; no structured output is made up.
      assert.isNull(model.reflect_response.structured_output)
      const trace = model.reflect_response.trace
      assert.strictEqual(trace.effective_mode, "full")
      assert.strictEqual(trace.outcome, "content_written")
      assert.isArray(trace.tool_calls)
      assert.isAbove(trace.tool_calls.length, 0)
      assert.isNull(trace.tool_calls[0].output)

      const stateOf = Effect.gen(function*() {
        return {
          model: (yield* ok("GET", `${models}/alice`)).body,
          history: (yield* ok("GET", `${models}/alice/history`)).body,
          stats: (yield* ok("GET", `${bankPath(bank)}/stats`)).body,
          operations: (yield* ok("GET", `${bankPath(bank)}/operations`)).body.total
        }
      })
      const before = yield* stateOf
      const dry = (yield* ok("POST", `${models}/alice/dry-run-refresh`)).body
      assert.deepStrictEqual(yield* stateOf, before)
      assert.strictEqual(dry.mental_model_id, "alice")
      assert.strictEqual(dry.name, "Alice")
      assert.strictEqual(dry.requested_mode, "delta")
      // No language model: a delta cannot run, and the dry run says so.
      assert.strictEqual(dry.effective_mode, "full")
      assert.isNull(dry.mode_fallback_reason)
      assert.isAbove(dry.warnings.length, 0)
      assert.strictEqual(dry.outcome, "content_written")
      assert.isTrue(dry.would_persist)
      assert.deepStrictEqual(dry.scope, {
        tags: null,
        tags_match: "any",
        tag_groups: null,
        fact_types: null,
        exclude_mental_models: false,
        exclude_mental_model_ids: ["alice"]
      })
      assert.isString(dry.window.created_before)
      assert.isNull(dry.window.created_after)
      assert.strictEqual(dry.current_content, before.model.content)
      assert.isString(dry.preview_content)
      assert.strictEqual(dry.diff === "", dry.preview_content === dry.current_content)
      assert.isArray(dry.based_on.memories)
      assert.isAbove(Object.values(dry.facts.retrieved as Record<string, number>).reduce((a, b) => a + b, 0), 0)
      assert.strictEqual(dry.trace.effective_mode, "full")
      assert.isNumber(dry.duration_ms)
      assert.deepStrictEqual(Object.keys(dry.usage).sort(), ["input_tokens", "output_tokens", "total_tokens"])

      const cleared = (yield* ok("POST", `${models}/alice/clear`)).body
      assert.strictEqual(cleared.content, "")
      assert.isNull(cleared.last_refreshed_at)
      assert.isNull(cleared.reflect_response)
      assert.strictEqual(cleared.source_query, model.source_query)
      assert.deepStrictEqual(cleared.trigger, model.trigger)
      assert.strictEqual((yield* ok("GET", `${models}/alice/history`)).body.length, before.history.length)
      const afterClear = (yield* ok("POST", `${models}/alice/dry-run-refresh`)).body
      assert.strictEqual(afterClear.mode_fallback_reason, "no_baseline_content")
      assert.strictEqual(afterClear.current_content, "")
      assert.isTrue(afterClear.diff.startsWith("--- current\n+++ preview\n@@ -0,0 +1,"), afterClear.diff)

      for (const route of ["clear", "dry-run-refresh"]) {
        const missing = yield* call("POST", `${models}/nobody/${route}`)
        assert.strictEqual(missing.status, 404)
        assert.isString(missing.body.detail)
      }
      // null removes the schema; keep_trace off stops keeping a trace.
      const updated =
        (yield* ok("PATCH", `${models}/alice`, { trigger: { response_schema: null, keep_trace: false } })).body
      assert.deepStrictEqual(updated.trigger, {
        mode: "delta",
        refresh_after_consolidation: false,
        keep_trace: false,
        response_schema: null
      })
    }))

  it.effect("the published Hindsight client 0.9.1: config fields, clear, dry-run refresh, recover and deleteOperation", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const store = yield* OperationStore
      const client = new HindsightClient({ baseUrl: server.url })
      const raw = createClient(createConfig({ baseUrl: server.url }))
      const bank = "hs-client"
      const run = <A>(promise: () => Promise<A>) => Effect.promise(promise)

      yield* run(() => client.createBank(bank, { name: "Client bank" }))
      yield* run(() => client.retainBatch(bank, facts.map((content) => ({ content }))))
      const config = yield* run(() =>
        client.updateBankConfig(bank, { enableGraphRetrieval: false, enableReranking: false })
      )
      assert.strictEqual(config.config["enable_graph_retrieval"], false)
      assert.strictEqual(config.config["enable_reranking"], false)
      assert.strictEqual(config.config["enable_temporal_retrieval"], true)
      const recalled = yield* run(() => client.recall(bank, "Alice Novak", { trace: true, includeSourceFacts: true }))
      assert.notProperty(recalled.trace!["strategies"] as object, "graph")
      assert.strictEqual(typeof recalled.source_facts_truncated, "boolean")
      const banks = yield* run(() => sdk.listBanks({ client: raw }))
      assert.isString(banks.data?.banks.find((item) => item.bank_id === bank)?.last_write_at)

      const created = yield* run(() =>
        client.createMentalModel(bank, "Alice", "What do we know about Alice Novak?", { id: "alice" })
      )
      yield* operationFinished(bank, created.operation_id!)

      const dry: MentalModelDryRunRefreshResult = yield* run(() => client.dryRunRefreshMentalModel(bank, "alice"))
      assert.strictEqual(dry.mental_model_id, "alice")
      assert.strictEqual(dry.name, "Alice")
      assert.oneOf(dry.requested_mode, ["full", "delta"])
      assert.oneOf(dry.effective_mode, ["full", "delta"])
      assert.oneOf(dry.outcome, [
        "content_written",
        "content_preserved_no_new_facts",
        "refresh_failed_empty_candidate",
        "refresh_failed_delta_not_applied"
      ])
      assert.isBoolean(dry.would_persist)
      assert.oneOf(dry.scope.tags_match, ["any", "all", "any_strict", "all_strict", "exact"])
      assert.isBoolean(dry.scope.exclude_mental_models)
      assert.isString(dry.window.created_before)
      assert.isObject(dry.facts.retrieved)
      assert.isString(dry.current_content)
      assert.isString(dry.candidate_content)
      assert.isString(dry.preview_content)
      assert.isString(dry.diff)
      assert.oneOf(dry.trace.effective_mode, ["full", "delta"])
      assert.isString(dry.trace.outcome)
      assert.isArray(dry.trace.tool_calls)
      for (const call of dry.trace.tool_calls ?? []) {
        assert.isString(call.tool)
        assert.isNumber(call.duration_ms)
      }
      assert.isNumber(dry.usage?.total_tokens)
      assert.isArray(dry.warnings)

      const cleared: MentalModelResponse = yield* run(() => client.clearMentalModel(bank, "alice"))
      assert.strictEqual(cleared.id, "alice")
      assert.strictEqual(cleared.bank_id, bank)
      assert.strictEqual(cleared.content, "")
      assert.strictEqual(cleared.source_query, "What do we know about Alice Novak?")
      assert.isNull(cleared.last_refreshed_at)
      const missing = yield* run(() => client.clearMentalModel(bank, "nobody").then(() => null, (error) => error))
      assert.strictEqual(missing.statusCode, 404)

      const recovered = yield* run(() => sdk.recoverConsolidation({ client: raw, path: { bank_id: bank } }))
      assert.strictEqual(recovered.response.status, 200)
      assert.deepStrictEqual(recovered.data, { retried_count: 0 })

      const finished = (yield* ok("GET", `${bankPath(bank)}/operations`)).body.operations
        .find((operation: any) => operation.status === "completed")
      const deleted = yield* run(() =>
        sdk.deleteOperation({ client: raw, path: { bank_id: bank, operation_id: finished.id } })
      )
      assert.strictEqual(deleted.response.status, 200)
      assert.strictEqual(deleted.data?.success, true)
      assert.strictEqual(deleted.data?.operation_id, finished.id)
      assert.isString(deleted.data?.message)
      // The operation is stored without waking the bank's actor: it stays pending.
      yield* ok("PUT", bankPath("hs-client-idle"), {})
      const waiting = yield* store.create({ bankId: "hs-client-idle", taskType: "hs_hold", payload: {} })
      const refused = yield* run(() =>
        sdk.deleteOperation({ client: raw, path: { bank_id: "hs-client-idle", operation_id: waiting.id } })
      )
      assert.strictEqual(refused.response.status, 409)
      assert.isString((refused.error as { detail?: unknown }).detail)
    }))
})

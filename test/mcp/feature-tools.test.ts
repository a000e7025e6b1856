/**
 * The feature-family MCP tools (SERVICE_API_MCP_TOOL_FAMILIES=all) through the SDK's own client: listed on both
 * endpoints with their hints; every tool called with valid arguments — a read through /mcp/ (with bank_id) and
 * /mcp/{bank_id}/ answering exactly what the REST route answers for the same call, a write checked through REST
 * afterwards — and with a bad argument, an `isError` result naming the field on both endpoints. Heavy work (dream
 * runs, sub-routines, recomputes, learning, large transforms) comes back as the queued operation. Also: the
 * setting itself, bank-scoped keys (a fork only into a bank the key reaches), and one family with the brain off.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Option, Redacted } from "effect"
import { glove } from "../../layers/models/embeddings/EmbeddingsLive.ts"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { mcpToolFamilies, parseToolFamilies } from "../../src/mcp/McpToolFamilies.ts"
import { Llm } from "../../src/models/Llm.ts"
import { sharedGloveCacheDir } from "../layers/models/embeddings/GloveCacheDir.ts"
import { bankPath, call, ok, operationFinished, settled } from "../support/HttpCalls.ts"
import { connectMcp, type McpSession } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const featureTools: Record<string, ReadonlyArray<string>> = {
  dreams: ["trigger_dream", "list_dreams", "get_dream_stats", "record_prediction_outcome", "review_dream_proposal"],
  repos: [
    "enable_repo",
    "get_repo",
    "list_repo_branches",
    "repo_status",
    "commit_repo",
    "repo_log",
    "create_repo_branch",
    "checkout_repo_branch",
    "delete_repo_branch",
    "repo_diff",
    "reset_repo",
    "fork_repo_bank"
  ],
  datasets: [
    "dataset_catalog",
    "list_datasets",
    "create_dataset",
    "get_dataset",
    "update_dataset",
    "delete_dataset",
    "list_dataset_sets",
    "import_dataset_sets",
    "update_dataset_set",
    "transform_dataset_sets",
    "generate_dataset_variants",
    "retain_dataset_sets",
    "export_dataset"
  ],
  graph: ["graph_intelligence", "investigate_graph"],
  anomalies: ["list_anomalies", "acknowledge_anomaly", "resolve_anomaly", "suppress_anomaly"],
  entities: [
    "get_entity_trajectory",
    "recompute_entity_trajectory",
    "get_entity_intelligence",
    "recompute_entity_intelligence"
  ],
  brain: [
    "brain_status",
    "run_sub_routine",
    "get_activity_histogram",
    "predict_activity",
    "get_brain_influence",
    "learn_from_remote"
  ],
  forgetting: ["forget", "get_retention", "set_retention"]
}
const allFeatureTools = Object.values(featureTools).flat()

/** GloVe vectors so that contradictions are found offline (see test/memory/anomaly/anomalies.http.test.ts). */
const models = Layer.mergeAll(glove({ cacheDir: sharedGloveCacheDir }), Llm.layerNone)
const app = testApp(
  { mcpToolFamilies, brain: { ...defaultBrainSettings, learnAllowPrivateNetworks: true } },
  undefined,
  models
)

interface Endpoints {
  readonly bank: string
  readonly multi: McpSession
  readonly single: McpSession
}

const endpoints = (bank: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const multi = yield* connectMcp(`${server.url}/mcp/`)
    const single = yield* connectMcp(`${server.url}/mcp/${bank}/`)
    return { bank, multi, single } satisfies Endpoints
  })

/** The value without the keys named `volatile`, at any depth. */
const withoutKeys = (value: any, volatile: ReadonlyArray<string>): any =>
  Array.isArray(value)
    ? value.map((item) => withoutKeys(item, volatile))
    : typeof value === "object" && value !== null
    ? Object.fromEntries(
      Object.entries(value).filter(([key]) => !volatile.includes(key)).map((
        [key, item]
      ) => [key, withoutKeys(item, volatile)])
    )
    : value

/**
 * A read tool through both endpoints answers what REST answers for the same call; `volatile` names the keys that
 * may differ between two identical reads (a generation time, a cache hit).
 */
const sameAsRest = (
  at: Endpoints,
  tool: string,
  args: Record<string, unknown>,
  rest: readonly [method: string, path: string, json?: unknown],
  volatile: ReadonlyArray<string> = []
) =>
  Effect.gen(function*() {
    const expected = (yield* ok(rest[0], `${bankPath(at.bank)}${rest[1]}`, rest[2])).body
    const multi = yield* at.multi.ok(tool, { bank_id: at.bank, ...args })
    const single = yield* at.single.ok(tool, args)
    assert.deepStrictEqual(withoutKeys(multi, volatile), withoutKeys(expected, volatile), `${tool} on /mcp/`)
    assert.deepStrictEqual(withoutKeys(single, volatile), withoutKeys(expected, volatile), `${tool} on /mcp/{bank_id}/`)
    return multi
  })

/** A tool error on both endpoints whose text contains each of `parts` (the field, or what is missing). */
const refused = (at: Endpoints, tool: string, args: Record<string, unknown>, ...parts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const texts = [yield* at.multi.fails(tool, { bank_id: at.bank, ...args }), yield* at.single.fails(tool, args)]
    for (const text of texts) for (const part of parts) assert.include(text, part, `${tool}: ${text}`)
    return texts[0]!
  })

/** The same call on REST fails with the detail the tool reports. */
const sameErrorAsRest = (
  at: Endpoints,
  tool: string,
  args: Record<string, unknown>,
  rest: readonly [method: string, path: string, json?: unknown],
  status: number
) =>
  Effect.gen(function*() {
    const answer = yield* call(rest[0], `${bankPath(at.bank)}${rest[1]}`, rest[2])
    assert.strictEqual(answer.status, status, answer.text)
    const text = yield* refused(at, tool, args)
    assert.include(text, answer.body.detail, tool)
  })

const viaMulti = (at: Endpoints, tool: string, args: Record<string, unknown> = {}) =>
  at.multi.ok(tool, { bank_id: at.bank, ...args })

const completed = (bank: string, operationId: string) =>
  Effect.map(
    operationFinished(bank, operationId),
    (detail) => assert.strictEqual(detail.status, "completed", JSON.stringify(detail))
  )

const retain = (bank: string, contents: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/memories`, { items: contents.map((content) => ({ content, ...extra })) })
    yield* settled(bank)
  })

const teamFacts = [
  "Priya moved to Lisbon in March 2024 and now works as a cartographer.",
  "Priya maps the old town of Lisbon for the city council.",
  "Tomás prefers green tea to coffee and runs the Friday book club.",
  "Priya and Tomás planned the Friday book club trip to Porto.",
  "Tomás invited Priya to present her Lisbon maps at the book club."
]

const loadConfig = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return yield* EngramConfig
  }).pipe(
    Effect.provide(EngramConfig.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))),
    Effect.exit
  )

describe("SERVICE_API_MCP_TOOL_FAMILIES", () => {
  it("names families, `all`, or is refused naming the unknown one and the known ones", () => {
    assert.deepStrictEqual(parseToolFamilies(""), [])
    assert.deepStrictEqual(parseToolFamilies(" repos, Dreams ,"), ["dreams", "repos"])
    assert.deepStrictEqual(parseToolFamilies("graph,all"), mcpToolFamilies)
    const problem = parseToolFamilies("graph,dreems")
    assert.isString(problem)
    assert.include(problem as string, "dreems")
    assert.include(problem as string, mcpToolFamilies.join(", "))
  })

  it.effect("is read at start: none by default, the named families, an unknown one stops the start", () =>
    Effect.gen(function*() {
      const none = yield* loadConfig({})
      assert.isTrue(Exit.isSuccess(none) && none.value.mcpToolFamilies.length === 0)
      const named = yield* loadConfig({ SERVICE_API_MCP_TOOL_FAMILIES: "brain,graph" })
      assert.isTrue(Exit.isSuccess(named))
      if (Exit.isSuccess(named)) assert.deepStrictEqual(named.value.mcpToolFamilies, ["graph", "brain"])
      const refused = yield* loadConfig({ SERVICE_API_MCP_TOOL_FAMILIES: "graph,dreems" })
      assert.isTrue(Exit.isFailure(refused))
      assert.include(JSON.stringify(refused), "SERVICE_API_MCP_TOOL_FAMILIES: unknown tool family dreems")
    }))
})

layer(app, { excludeTestServices: true, timeout: "3 minutes" })("feature-family MCP tools", (it) => {
  it.effect("are listed on /mcp/ (with bank_id) and /mcp/{bank_id}/ on top of the spec's tools, with hints", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-listing")
      assert.strictEqual(Object.keys(featureTools).length, mcpToolFamilies.length)
      const multi = yield* at.multi.tools
      const single = yield* at.single.tools
      assert.strictEqual(multi.length, 42 + allFeatureTools.length)
      assert.strictEqual(single.length, 39 + allFeatureTools.length)
      for (const name of allFeatureTools) {
        const listed = multi.find((tool) => tool.name === name)
        const scoped = single.find((tool) => tool.name === name)
        assert.isDefined(listed, name)
        assert.isDefined(scoped, name)
        assert.isAbove(listed!.description?.length ?? 0, 60, `${name} has a description an assistant can act on`)
        assert.isBoolean(listed!.annotations?.readOnlyHint, `${name} says whether it writes`)
        assert.isBoolean(listed!.annotations?.idempotentHint, `${name} says whether a retry is safe`)
        if (listed!.annotations?.readOnlyHint === false) assert.isBoolean(listed!.annotations?.destructiveHint, name)
        assert.notProperty(scoped!.inputSchema.properties ?? {}, "bank_id", name)
        // The catalog names no bank, so it takes none.
        if (name !== "dataset_catalog") assert.property(listed!.inputSchema.properties ?? {}, "bank_id", name)
      }
      const hints = (name: string) => multi.find((tool) => tool.name === name)!.annotations
      assert.isTrue(hints("reset_repo")?.destructiveHint)
      assert.isTrue(hints("delete_dataset")?.destructiveHint)
      assert.isTrue(hints("learn_from_remote")?.openWorldHint)
      assert.isTrue(hints("graph_intelligence")?.readOnlyHint)
    })))

  it.effect("dream tools: trigger (queued), list, stats, prediction outcomes and proposal reviews", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-dreams")
      yield* ok("PUT", bankPath(at.bank), { dream: { enabled: true } })
      yield* retain(at.bank, teamFacts)

      const queued = yield* at.single.ok("trigger_dream", {})
      assert.deepInclude(queued, { deduplicated: false })
      assert.isString(queued.operation_id)
      yield* completed(at.bank, queued.operation_id)
      const trance = yield* viaMulti(at, "trigger_dream", { run_type: "trance", trigger_source: "cron" })
      yield* completed(at.bank, trance.operation_id)

      const listed = yield* sameAsRest(at, "list_dreams", { limit: 5 }, ["GET", "/dreams?limit=5"])
      assert.sameMembers(listed.items.map((run: any) => run.run_type), ["dream", "trance"])
      const stats = yield* sameAsRest(at, "get_dream_stats", {}, ["GET", "/dreams/stats"])
      assert.strictEqual(stats.total_runs, 2)

      const run = listed.items.find((item: any) => item.run_type === "dream")
      const prediction = run.predictions[0]
      assert.isDefined(prediction, JSON.stringify(run))
      const outcome = yield* viaMulti(at, "record_prediction_outcome", {
        prediction_id: prediction.id,
        status: "confirmed",
        note: "It came up again."
      })
      assert.strictEqual(outcome.prediction.id, prediction.id)
      assert.strictEqual(outcome.outcome.status, "confirmed")
      const after = (yield* ok("GET", `${bankPath(at.bank)}/dreams`)).body.items.find((item: any) =>
        item.run_id === run.run_id
      )
      assert.deepStrictEqual(after.predictions.find((p: any) => p.id === prediction.id), outcome.prediction)

      const proposal = run.promotion_proposals[0]
      assert.isDefined(proposal, JSON.stringify(run))
      const reviewed = yield* at.single.ok("review_dream_proposal", {
        proposal_id: proposal.id,
        action: "reject",
        note: "not yet"
      })
      assert.strictEqual(reviewed.review_status, "rejected")
      const reread = (yield* ok("GET", `${bankPath(at.bank)}/dreams`)).body.items.find((item: any) =>
        item.run_id === run.run_id
      )
      assert.deepStrictEqual(reread.promotion_proposals.find((p: any) => p.id === proposal.id), reviewed)

      yield* refused(at, "trigger_dream", { run_type: "nap" }, "run_type")
      yield* refused(at, "list_dreams", { limit: 0 }, "limit")
      yield* refused(at, "get_dream_stats", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "record_prediction_outcome", { prediction_id: prediction.id, status: "maybe" }, "status")
      yield* refused(at, "review_dream_proposal", { proposal_id: proposal.id, action: "merge" }, "action")
      yield* sameErrorAsRest(at, "record_prediction_outcome", {
        prediction_id: "no-such-prediction",
        status: "confirmed"
      }, [
        "POST",
        "/dreams/predictions/no-such-prediction/outcome",
        { status: "confirmed" }
      ], 404)
      assert.include(yield* at.multi.fails("list_dreams", { bank_id: "mcp-no-such-bank" }), "not found")
    })))

  it.effect("repo tools: enable, read, status, commit, log, branch, checkout, delete a branch, diff, reset and fork the bank's repo", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-repo")
      yield* ok("PUT", bankPath(at.bank), { name: "Repo tools" })
      yield* retain(at.bank, ["Alice moved to Paris in 2020."])

      yield* sameAsRest(at, "get_repo", {}, ["GET", "/repo"])
      assert.include(yield* refused(at, "repo_status", {}), "enable_repo")
      const enabled = yield* at.single.ok("enable_repo", { repo_name: "team history" })
      assert.strictEqual(enabled.name, "team history")
      assert.strictEqual(enabled.active_branch, "main")
      assert.strictEqual((yield* viaMulti(at, "enable_repo")).repo_id, enabled.repo_id)
      const repo = yield* sameAsRest(at, "get_repo", {}, ["GET", "/repo"])
      assert.strictEqual(repo.repo.repo_id, enabled.repo_id)
      const repoPath = `/v1/default/repos/${enabled.repo_id}`
      const sameAsRepoRoute = (tool: string, args: Record<string, unknown>, path: string, json?: unknown) =>
        Effect.gen(function*() {
          const expected = (yield* ok(json === undefined ? "GET" : "POST", `${repoPath}${path}`, json)).body
          assert.deepStrictEqual(yield* viaMulti(at, tool, args), expected, `${tool} on /mcp/`)
          assert.deepStrictEqual(yield* at.single.ok(tool, args), expected, `${tool} on /mcp/{bank_id}/`)
          return expected
        })

      yield* retain(at.bank, ["Bob plays the cello."])
      const status = yield* sameAsRepoRoute("repo_status", {}, "/status")
      assert.isTrue(status.dirty)
      const committed = yield* viaMulti(at, "commit_repo", { message: "Bob's cello", actor: "mcp" })
      assert.isTrue(committed.created)
      const log = yield* sameAsRepoRoute("repo_log", { limit: 10 }, "/log?limit=10")
      assert.deepStrictEqual(log.commits.map((commit: any) => commit.message), ["Bob's cello", "Initial commit"])
      assert.strictEqual(log.commits[0].commit_id, committed.commit_id)

      const branch = yield* at.single.ok("create_repo_branch", {
        branch_name: "experiment",
        from_commit_id: committed.commit_id
      })
      assert.strictEqual(branch.branch_name, "experiment")
      const branches = yield* sameAsRest(at, "list_repo_branches", {}, ["GET", "/repo/branches"])
      assert.sameMembers(branches.branches.map((b: any) => b.branch_name), ["main", "experiment"])
      const diff = yield* sameAsRepoRoute(
        "repo_diff",
        { from_commit_id: log.commits[1].commit_id, to_commit_id: committed.commit_id },
        `/diff?from_commit_id=${log.commits[1].commit_id}&to_commit_id=${committed.commit_id}`
      )
      assert.isAbove(JSON.stringify(diff).length, 10)

      const checkedOut = yield* viaMulti(at, "checkout_repo_branch", { branch_name: "experiment" })
      assert.strictEqual(checkedOut.active_branch, "experiment")
      assert.strictEqual((yield* ok("GET", `${bankPath(at.bank)}/repo`)).body.repo.active_branch, "experiment")
      yield* at.single.ok("checkout_repo_branch", { branch_name: "main" })
      yield* at.single.ok("create_repo_branch", { branch_name: "scratch" })
      const remaining = yield* viaMulti(at, "delete_repo_branch", { branch_name: "scratch" })
      assert.deepStrictEqual(remaining.branches.map((branch: any) => branch.branch_name).sort(), ["experiment", "main"])
      assert.deepStrictEqual(
        (yield* ok("GET", `${repoPath}/branches`)).body.branches.map((branch: any) => branch.branch_name).sort(),
        ["experiment", "main"]
      )

      const reset = yield* at.single.ok("reset_repo", { commit_id: log.commits[1].commit_id, force: true })
      assert.deepStrictEqual(reset, (yield* ok("GET", `${repoPath}/status`)).body)
      const texts = (yield* ok("GET", `${bankPath(at.bank)}/memories/list`)).body.items.map((item: any) => item.text)
      assert.notInclude(texts.join(" "), "cello")

      const fork = yield* viaMulti(at, "fork_repo_bank", {
        target_bank_id: "mcp-repo-fork",
        source_commit_id: committed.commit_id
      })
      assert.strictEqual(fork.bank_id, "mcp-repo-fork")
      const forked = (yield* ok("GET", `${bankPath("mcp-repo-fork")}/memories/list`)).body.items.map((item: any) =>
        item.text
      )
      assert.include(forked.join(" "), "cello")

      yield* refused(at, "enable_repo", { repo_name: 5 }, "repo_name")
      yield* refused(at, "get_repo", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "list_repo_branches", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "repo_status", { branch_name: "no spaces allowed" }, "branch_name")
      yield* refused(at, "commit_repo", {}, "message: required")
      yield* refused(at, "repo_log", { limit: 0 }, "limit")
      yield* refused(at, "create_repo_branch", { branch_name: "-leading-dash" }, "branch_name")
      yield* refused(at, "checkout_repo_branch", { branch_name: "nowhere" }, "branch 'nowhere' not found")
      yield* refused(at, "delete_repo_branch", { branch_name: "main" }, "branch_name", "active branch")
      yield* refused(at, "delete_repo_branch", { branch_name: "nowhere" }, "branch 'nowhere' not found")
      yield* refused(at, "repo_diff", { from_commit_id: "a", from_branch: "main" }, "from_branch")
      yield* refused(at, "reset_repo", { commit_id: "no-such-commit" }, "commit 'no-such-commit' not found")
      yield* refused(at, "fork_repo_bank", { target_bank_id: "has space" }, "target_bank_id")
      yield* refused(at, "fork_repo_bank", { target_bank_id: "mcp-repo-fork" }, "target_bank_id", "already exists")
    })))

  it.effect("dataset tools: catalog, datasets, sets, transform (queued when large), generate, retain and export", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-datasets")
      const taste = "/forge/taste"

      const catalog = (yield* ok("GET", `${bankPath(at.bank)}${taste}/catalog`)).body
      assert.deepStrictEqual(yield* at.multi.ok("dataset_catalog"), catalog)
      assert.deepStrictEqual(yield* at.single.ok("dataset_catalog"), catalog)

      const created = yield* viaMulti(at, "create_dataset", {
        name: "Team trivia",
        schema_type: "qa_pair",
        taste_tags: ["team"]
      })
      assert.strictEqual(created.schema_type, "qa_pair")
      const datasetId = created.id
      const read = yield* sameAsRest(at, "get_dataset", { dataset_id: datasetId }, [
        "GET",
        `${taste}/datasets/${datasetId}`
      ])
      assert.strictEqual(read.name, "Team trivia")
      const updated = yield* at.single.ok("update_dataset", {
        dataset_id: datasetId,
        description: "Questions about the team."
      })
      assert.deepStrictEqual(updated, (yield* ok("GET", `${bankPath(at.bank)}${taste}/datasets/${datasetId}`)).body)
      assert.strictEqual(updated.description, "Questions about the team.")

      const questions = [
        "Where does Priya live?",
        "What does Tomás drink?",
        "Who runs the book club?",
        "What is Priya's job?",
        "Where was the trip?"
      ]
      const imported = yield* viaMulti(at, "import_dataset_sets", {
        dataset_id: datasetId,
        sets: questions.map((question) => ({ question, answer: "Ask the team." })),
        set_key_prefix: "trivia"
      })
      assert.strictEqual(imported.imported_count, 5)
      const sets = yield* sameAsRest(at, "list_dataset_sets", { dataset_id: datasetId }, [
        "GET",
        `${taste}/datasets/${datasetId}/sets`
      ])
      assert.strictEqual(sets.total, 5)
      const listed = yield* sameAsRest(at, "list_datasets", {}, ["GET", `${taste}/datasets`])
      assert.deepStrictEqual(listed.datasets.map((d: any) => d.id), [datasetId])
      const [first, second] = sets.sets

      const ready = yield* at.single.ok("update_dataset_set", { set_id: first.id, status: "ready" })
      assert.strictEqual(ready.status, "ready")
      assert.deepStrictEqual(ready, (yield* ok("GET", `${bankPath(at.bank)}${taste}/sets/${first.id}`)).body)

      const preview = yield* viaMulti(at, "transform_dataset_sets", {
        dataset_id: datasetId,
        set_ids: [first.id],
        ops: [{ op: "raw" }],
        preview: true
      })
      assert.strictEqual(preview.items.length, 1)
      assert.deepStrictEqual(preview.items[0].before, preview.items[0].after)
      // More than three sets: the transform is queued, not run while the call waits.
      const large = yield* at.single.ok("transform_dataset_sets", { dataset_id: datasetId, ops: [{ op: "raw" }] })
      assert.isString(large.operation_id, JSON.stringify(large))
      yield* completed(at.bank, large.operation_id)

      // No language model offline: the tool reports what REST reports for the same call.
      yield* sameErrorAsRest(
        at,
        "generate_dataset_variants",
        { dataset_id: datasetId, set_ids: [second.id], count: 2 },
        [
          "POST",
          `${taste}/datasets/${datasetId}/generate`,
          { set_ids: [second.id], count: 2 }
        ],
        400
      )

      const exported = yield* sameAsRest(at, "export_dataset", { dataset_id: datasetId }, ["POST", `${taste}/export`, {
        dataset_id: datasetId
      }], ["exported_at"])
      assert.include(exported.content, "Where does Priya live?")

      const retained = yield* viaMulti(at, "retain_dataset_sets", { set_ids: [first.id] })
      assert.strictEqual(retained.retained_count, 1)
      yield* settled(at.bank)
      const memories = (yield* ok("GET", `${bankPath(at.bank)}/memories/list`)).body.items
      assert.isTrue(
        memories.some((memory: any) => memory.tags.includes(`taste:dataset:${datasetId}`)),
        JSON.stringify(memories)
      )

      yield* refused(at, "dataset_catalog", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "list_datasets", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "create_dataset", { name: "   " }, "name")
      yield* refused(at, "get_dataset", { dataset_id: "no-such-dataset" }, "not found")
      yield* refused(
        at,
        "update_dataset",
        { dataset_id: datasetId, schema_type: "custom" },
        "schema_type: unknown argument"
      )
      yield* refused(at, "list_dataset_sets", { dataset_id: datasetId, limit: 501 }, "limit")
      yield* refused(at, "import_dataset_sets", { dataset_id: datasetId, sets: [{ prompt: "no answer" }] }, "answer")
      yield* refused(at, "update_dataset_set", { set_id: first.id, status: "shipped" }, "status")
      yield* refused(at, "transform_dataset_sets", { dataset_id: datasetId, ops: [] }, "ops")
      yield* refused(at, "generate_dataset_variants", { dataset_id: datasetId, set_ids: [] }, "set_ids")
      yield* refused(at, "retain_dataset_sets", { set_ids: [first.id] }, "retained")
      yield* refused(at, "export_dataset", { dataset_id: datasetId, adapter_id: "csv" }, "adapter_id")
      yield* refused(at, "delete_dataset", {}, "dataset_id: required")

      const deleted = yield* at.single.ok("delete_dataset", { dataset_id: datasetId })
      assert.deepInclude(deleted, { deleted: true, dataset_id: datasetId, sets_deleted: 5 })
      assert.strictEqual((yield* call("GET", `${bankPath(at.bank)}${taste}/datasets/${datasetId}`)).status, 404)
    })))

  it.effect("graph tools: graph intelligence and investigate answer what REST answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-graph")
      yield* retain(at.bank, teamFacts)
      yield* retain(at.bank, ["Priya moved from Lisbon to Berlin in 2025."])

      const volatile = ["generated_at", "cached"]
      const state = yield* sameAsRest(at, "graph_intelligence", {}, ["GET", "/graph/intelligence"], volatile)
      assert.isAbove(state.nodes.length, 0)
      yield* sameAsRest(
        at,
        "graph_intelligence",
        { limit: 3, node_kind: "entity", window_days: 0, tags_match: "any" },
        ["GET", "/graph/intelligence?limit=3&node_kind=entity&window_days=0&tags_match=any"],
        volatile
      )
      const answer = yield* sameAsRest(
        at,
        "investigate_graph",
        { query: "Where does Priya live now?", window_days: 0 },
        ["POST", "/graph/investigate", { query: "Where does Priya live now?", window_days: 0 }]
      )
      assert.isAbove(answer.answer.length, 0)

      yield* refused(at, "graph_intelligence", { confidence_min: 2 }, "confidence_min")
      yield* refused(at, "investigate_graph", { query: "" }, "query")
    })))

  it.effect("anomaly tools: list with corrections, acknowledge, resolve and suppress", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-anomalies")
      yield* retain(at.bank, [
        "The weather in Berlin was cold and grey that week.",
        "Carol keeps a garden of rare orchids.",
        "Dave bought a new bicycle for his commute."
      ])
      yield* ok("POST", `${bankPath(at.bank)}/memories`, {
        items: [{ content: "Alice works at Acme.", timestamp: "2024-01-10T09:00:00Z" }]
      })
      yield* ok("POST", `${bankPath(at.bank)}/memories`, {
        items: [{ content: "Alice no longer works at Acme.", timestamp: "2024-06-01T09:00:00Z" }]
      })
      yield* settled(at.bank)

      const report = yield* sameAsRest(at, "list_anomalies", {}, ["POST", "/anomaly/intelligence", {}])
      const event = report.events.find((candidate: any) => candidate.anomaly_type === "contradiction")
      assert.isDefined(event, JSON.stringify(report))
      assert.isAbove(event.corrections.length, 0)
      yield* sameAsRest(
        at,
        "list_anomalies",
        { anomaly_types: ["contradiction"], min_severity: 0.5, limit: 5 },
        ["POST", "/anomaly/intelligence", { anomaly_types: ["contradiction"], min_severity: 0.5, limit: 5 }]
      )

      const statusOf = (id: string) =>
        Effect.map(
          ok("POST", `${bankPath(at.bank)}/anomaly/intelligence`, {}),
          (r) => r.body.events.find((e: any) => e.id === id)
        )
      const acknowledged = yield* viaMulti(at, "acknowledge_anomaly", { event_id: event.id, note: "seen" })
      assert.strictEqual(acknowledged.status, "acknowledged")
      assert.deepStrictEqual(yield* statusOf(event.id), acknowledged)
      const resolved = yield* at.single.ok("resolve_anomaly", { event_id: event.id })
      assert.deepInclude(resolved, { status: "resolved", resolved_by: "user" })
      assert.deepStrictEqual(yield* statusOf(event.id), resolved)
      const suppressed = yield* viaMulti(at, "suppress_anomaly", { event_id: event.id, note: "known" })
      assert.strictEqual(suppressed.status, "suppressed")
      assert.deepStrictEqual(yield* statusOf(event.id), suppressed)

      yield* refused(at, "list_anomalies", { min_severity: 2 }, "min_severity")
      yield* refused(at, "acknowledge_anomaly", { event_id: "no-such-event" }, "not found")
      yield* refused(at, "resolve_anomaly", { event_id: event.id, note: 5 }, "note")
      yield* refused(at, "suppress_anomaly", {}, "event_id: required")
    })))

  it.effect("entity tools: trajectories and entity intelligence, recomputed as queued operations", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-entities")
      yield* retain(at.bank, [
        "Alice studies chemistry at Oxford University.",
        "Alice passed her chemistry exams at Oxford University.",
        "Alice joined Acme Corp as a software engineer.",
        "Alice leads the software engineering team at Acme Corp."
      ])
      const entities = (yield* ok("GET", `${bankPath(at.bank)}/entities?limit=100`)).body.items
      const alice = entities.find((entity: any) => entity.canonical_name === "Alice")
      assert.isDefined(alice, JSON.stringify(entities))

      yield* sameErrorAsRest(at, "get_entity_trajectory", { entity_id: alice.id }, [
        "GET",
        `/entities/${alice.id}/trajectory`
      ], 404)
      const queued = yield* at.single.ok("recompute_entity_trajectory", { entity_id: alice.id })
      assert.strictEqual(queued.status, "pending")
      yield* completed(at.bank, queued.operation_id)
      const trajectory = yield* sameAsRest(at, "get_entity_trajectory", { entity_id: alice.id }, [
        "GET",
        `/entities/${alice.id}/trajectory`
      ])
      assert.strictEqual(trajectory.entity_id, alice.id)

      yield* sameErrorAsRest(at, "get_entity_intelligence", {}, ["GET", "/entity-intelligence"], 404)
      const requested = yield* viaMulti(at, "recompute_entity_intelligence")
      assert.strictEqual(requested.status, "pending")
      yield* completed(at.bank, requested.operation_id)
      const intelligence = yield* sameAsRest(at, "get_entity_intelligence", {}, ["GET", "/entity-intelligence"])
      assert.isAbove(intelligence.entity_count, 0)

      yield* refused(at, "get_entity_trajectory", { entity_id: 7 }, "entity_id")
      yield* refused(at, "recompute_entity_trajectory", { entity_id: "no-such-entity" }, "not found")
      yield* refused(at, "get_entity_intelligence", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "recompute_entity_intelligence", { verbose: true }, "verbose: unknown argument")
    })))

  it.effect("brain tools: status, sub-routine (queued), activity, influence, and learning from another engram", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const at = yield* endpoints("mcp-brain")
      yield* retain(at.bank, teamFacts, { timestamp: "2024-04-02T10:00:00Z" })
      yield* recallTwice(at.bank)

      const queued = yield* at.single.ok("run_sub_routine", { force_rebuild: true, horizon_hours: 12 })
      assert.deepInclude(queued, { deduplicated: false })
      yield* completed(at.bank, queued.operation_id)
      const status = yield* sameAsRest(at, "brain_status", {}, ["GET", "/brain/status"], ["metrics"])
      assert.isTrue(status.enabled)
      const histogram = yield* sameAsRest(at, "get_activity_histogram", {}, ["GET", "/sub-routine/histogram"])
      assert.strictEqual(histogram.histogram.length, 24)
      yield* sameAsRest(at, "predict_activity", { horizon_hours: 6 }, [
        "GET",
        "/sub-routine/predictions?horizon_hours=6"
      ], ["generated_at"])
      yield* sameAsRest(
        at,
        "get_brain_influence",
        { window_days: 7, top_k: 5 },
        ["GET", "/brain/influence?window_days=7&top_k=5"],
        ["generated_at"]
      )

      // This server is the remote: the learn is a queued operation that stores the remote bank's memories here.
      const remote = "mcp-brain-remote"
      yield* retain(remote, ["Ines repairs old bicycles in her garage every weekend."])
      const learning = yield* viaMulti(at, "learn_from_remote", {
        remote_endpoint: server.url,
        remote_bank_id: remote,
        learning_type: "raw_mirror"
      })
      assert.deepInclude(learning, { deduplicated: false })
      yield* completed(at.bank, learning.operation_id)
      const learned = (yield* ok("GET", `${bankPath(at.bank)}/memories/list?limit=100`)).body.items
      assert.isTrue(
        learned.some((memory: any) => memory.text.includes("Ines") && memory.tags.includes("brain-learn")),
        JSON.stringify(learned)
      )

      yield* refused(at, "brain_status", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "run_sub_routine", { mode: "turbo" }, "mode")
      yield* refused(at, "get_activity_histogram", { verbose: true }, "verbose: unknown argument")
      yield* refused(at, "predict_activity", { horizon_hours: 0 }, "horizon_hours")
      yield* refused(at, "get_brain_influence", { entity_type: "dream" }, "entity_type")
      yield* refused(at, "learn_from_remote", { remote_endpoint: "", remote_bank_id: remote }, "remote_endpoint")
      assert.include(yield* at.multi.fails("brain_status", { bank_id: "mcp-no-such-bank" }), "not found")
    })))
})

const adminKey = "k-admin-0123456789"
const aliceKey = "k-alice-0123456789"
const scopedApp = testApp({
  mcpToolFamilies,
  tenantExtension: "api_key",
  tenantApiKey: Option.some(Redacted.make(adminKey)),
  tenantApiKeys: [{ key: Redacted.make(aliceKey), banks: ["alice", "alice-*"] }]
})

layer(scopedApp, { excludeTestServices: true })("feature-family MCP tools with bank-scoped keys", (it) => {
  it.effect("reach only the key's banks, and a fork only into a bank the key reaches", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const as = (key: string) => ({ authorization: `Bearer ${key}` })
      for (const id of ["alice", "bob"]) {
        const created = yield* server.request("PUT", bankPath(id), { headers: as(adminKey), json: { name: id } })
        assert.strictEqual(created.status, 200, created.text)
      }
      const mcp = yield* connectMcp(`${server.url}/mcp/`, as(aliceKey))
      yield* mcp.ok("enable_repo", { bank_id: "alice" })
      assert.include(yield* mcp.fails("enable_repo", { bank_id: "bob" }), "does not reach bank 'bob'")
      assert.include(yield* mcp.fails("list_datasets", { bank_id: "bob" }), "does not reach bank 'bob'")
      const refused = yield* mcp.fails("fork_repo_bank", { bank_id: "alice", target_bank_id: "bob-copy" })
      assert.include(refused, "target_bank_id: this API key does not reach bank 'bob-copy'")
      const banks = yield* server.request("GET", "/v1/default/banks", { headers: as(adminKey) })
      assert.notInclude(banks.body.banks.map((bank: any) => bank.bank_id), "bob-copy")
      const fork = yield* mcp.ok("fork_repo_bank", { bank_id: "alice", target_bank_id: "alice-copy" })
      assert.strictEqual(fork.bank_id, "alice-copy")
    })))
})

/** Two recalls, so that the bank has reads for its activity model and influence telemetry. */
const recallTwice = (bank: string) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bankPath(bank)}/memories/recall`, { query: "Where does Priya live?" })
    yield* ok("POST", `${bankPath(bank)}/memories/recall`, { query: "Who runs the book club?" })
  })

const brainOff = testApp({ mcpToolFamilies: ["brain"], brain: { ...defaultBrainSettings, enabled: false } })

layer(brainOff, { excludeTestServices: true })("one feature family, with the brain runtime off", (it) => {
  it.effect("only the named family is listed; its tools say which setting turned them off, as REST does", () =>
    Effect.scoped(Effect.gen(function*() {
      const at = yield* endpoints("mcp-brain-off")
      yield* ok("PUT", bankPath(at.bank), { name: "Brain off" })
      const names = (yield* at.multi.tools).map((tool) => tool.name)
      assert.strictEqual(names.length, 42 + featureTools["brain"]!.length)
      assert.includeMembers(names, [...featureTools["brain"]!])
      assert.notInclude(names, "trigger_dream")
      const rest = yield* call("GET", `${bankPath(at.bank)}/brain/status`)
      assert.strictEqual(rest.status, 404, rest.text)
      const validArgs: Record<string, Record<string, unknown>> = {
        learn_from_remote: { remote_endpoint: "https://memory.example.com", remote_bank_id: "team" }
      }
      for (const tool of featureTools["brain"]!) {
        assert.include(yield* at.single.fails(tool, validArgs[tool] ?? {}), "SERVICE_API_BRAIN_ENABLED=false", tool)
      }
    })))
})

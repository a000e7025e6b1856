/**
 * Entity trajectories over the real HTTP server: 404 until computed (saying why), a recompute as a durable
 * operation, the offline labelling's readable states and a well-formed model (path in time order, distributions),
 * the settings with their validation, the automatic recompute after retains when a bank turns it on, and the
 * language-model labelling against the scripted OpenAI-compatible server with its prompt asserted.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"
import { onePurpose, Scripted, scriptedApp, scriptedModels } from "../../support/ScriptedLlm.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

/** One item per fact, a day apart, so time order is retain order. */
const retainDays = (id: string, startDay: number, sentences: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const items = sentences.map((content, index) => ({
      content,
      timestamp: new Date(Date.UTC(2024, 0, startDay + index, 9)).toISOString()
    }))
    const response = yield* request("POST", `${bank(id)}/memories`, { items })
    assert.strictEqual(response.status, 200, response.text)
  })

const entityId = (id: string, name: string) =>
  Effect.gen(function*() {
    const list = yield* request("GET", `${bank(id)}/entities?limit=100`)
    const entity = (list.body.items as Array<any>).find((item) => item.canonical_name === name)
    assert.isDefined(entity, `entity ${name} in ${list.text}`)
    return entity.id as string
  })

const finished = (id: string, operationId: string) =>
  eventually(
    request("GET", `${bank(id)}/operations/${operationId}/result`),
    (r) => r.body.status === "completed" || r.body.status === "failed"
  )

const recompute = (id: string, entity: string) =>
  Effect.gen(function*() {
    const queued = yield* request("POST", `${bank(id)}/entities/${entity}/trajectory/recompute`)
    assert.strictEqual(queued.status, 200, queued.text)
    assert.strictEqual(queued.body.status, "pending")
    const done = yield* finished(id, queued.body.operation_id)
    assert.strictEqual(done.body.status, "completed", done.text)
    return done.body.result
  })

const aliceFacts = [
  "Alice studies chemistry at Oxford University.",
  "Alice passed her chemistry exams at Oxford University.",
  "Alice wrote her chemistry thesis at Oxford University.",
  "Alice joined Acme Corp as a software engineer.",
  "Alice leads the software engineering team at Acme Corp.",
  "Alice was promoted to director of software engineering at Acme Corp."
]

const sumsToOne = (values: ReadonlyArray<number>) => assert.approximately(values.reduce((a, b) => a + b, 0), 1, 1e-4)

layer(testApp(), { excludeTestServices: true })("entity trajectories offline", (it) => {
  it.effect("404 until computed; a recompute gives readable states along the facts' time order", () =>
    Effect.gen(function*() {
      yield* retainDays("traj", 1, aliceFacts)
      const alice = yield* entityId("traj", "Alice")
      const before = yield* request("GET", `${bank("traj")}/entities/${alice}/trajectory`)
      assert.strictEqual(before.status, 404)
      assert.include(before.body.detail, "not computed")
      const unknown = yield* request("POST", `${bank("traj")}/entities/nobody/trajectory/recompute`)
      assert.strictEqual(unknown.status, 404)
      assert.include(unknown.body.detail, "entity 'nobody' not found")

      const result = yield* recompute("traj", alice)
      assert.deepStrictEqual(result.entities, [{
        entity_id: alice,
        current_state: result.entities[0].current_state,
        facts: 6
      }])
      const trajectory = (yield* request("GET", `${bank("traj")}/entities/${alice}/trajectory`)).body
      assert.strictEqual(trajectory.entity_id, alice)
      assert.strictEqual(trajectory.bank_id, "traj")
      assert.strictEqual(trajectory.llm_model, "offline")
      assert.strictEqual(trajectory.prompt_version, "offline-kmeans-v1")
      assert.lengthOf(trajectory.vocabulary_hash, 32)
      const states: Array<string> = trajectory.state_vocabulary
      assert.isAtLeast(states.length, 2)
      for (const state of states) assert.match(state, /^[A-Z0-9]+(_[A-Z0-9]+)*$/)
      assert.notInclude(states.join(" "), "ALICE", "the entity's own name says nothing about its state")
      // The path runs over the six facts, oldest first, and starts and ends in different states.
      const path: Array<any> = trajectory.viterbi_path
      assert.deepStrictEqual(path.map((step) => step.fact_preview.split(" [")[0]), aliceFacts)
      assert.deepStrictEqual(
        path.map((step) => step.occurred_sort_at),
        [...path.map((step) => step.occurred_sort_at)].sort()
      )
      assert.notStrictEqual(path[0].state, path[5].state, `${JSON.stringify(path.map((step) => step.state))}`)
      assert.strictEqual(trajectory.current_state, path[5].state)
      assert.match(trajectory.current_state, /ACME|SOFTWARE|ENGINEER/)
      assert.lengthOf(trajectory.transition_matrix, states.length)
      for (const row of trajectory.transition_matrix) sumsToOne(row)
      assert.strictEqual(trajectory.forecast_horizon, 5)
      assert.sameMembers(Object.keys(trajectory.forecast_distribution), states)
      sumsToOne(Object.values(trajectory.forecast_distribution))
      assert.isBelow(trajectory.forward_log_prob, 0)
      assert.isTrue(trajectory.anomaly_score >= 0 && trajectory.anomaly_score <= 1)
      assert.isNotNull(trajectory.computed_at)

      // An entity with too few facts: the run completes and says why; the read says so too.
      yield* retainDays("traj", 10, ["Carol visits Lisbon.", "Carol paints the harbour of Lisbon."])
      const carol = yield* entityId("traj", "Carol")
      const skipped = yield* recompute("traj", carol)
      assert.include(skipped.entities[0].skipped, "a trajectory needs at least 3")
      const none = yield* request("GET", `${bank("traj")}/entities/${carol}/trajectory`)
      assert.strictEqual(none.status, 404)
      assert.include(none.body.detail, "it has 2 facts")
    }))

  it.effect("settings are validated, shown in the config and drive the automatic recompute after retains", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("auto"), {})
      for (
        const [field, value] of [
          ["entity_trajectory_forecast_horizon", 0],
          ["entity_trajectory_forecast_horizon", 51],
          ["entity_trajectory_laplace_alpha", 0],
          ["entity_trajectory_min_facts", 1],
          ["enable_entity_trajectories", "yes"]
        ] as const
      ) {
        const bad = yield* request("PATCH", `${bank("auto")}/config`, { updates: { [field]: value } })
        assert.strictEqual(bad.status, 400, `${field}=${value}: ${bad.text}`)
        assert.include(bad.body.detail, field)
      }
      const config = yield* request("GET", `${bank("auto")}/config`)
      assert.include(config.body.config, {
        enable_entity_trajectories: false,
        entity_trajectory_forecast_horizon: 5,
        entity_trajectory_laplace_alpha: 0.1,
        entity_trajectory_min_facts: 3,
        entity_trajectory_max_facts: 200
      })
      assert.notProperty(config.body.overrides, "enable_entity_trajectories")

      // Off by default: retains compute nothing.
      yield* retainDays("auto", 1, ["Bob plays chess in Paris.", "Bob wins a chess tournament in Paris."])
      const patched = yield* request("PATCH", `${bank("auto")}/config`, {
        updates: {
          enable_entity_trajectories: true,
          entity_trajectory_forecast_horizon: 3,
          entity_trajectory_laplace_alpha: 0.5
        }
      })
      assert.strictEqual(patched.status, 200, patched.text)
      assert.include(patched.body.overrides, {
        enable_entity_trajectories: true,
        entity_trajectory_forecast_horizon: 3
      })
      const bob = yield* entityId("auto", "Bob")
      assert.strictEqual((yield* request("GET", `${bank("auto")}/entities/${bob}/trajectory`)).status, 404)

      // The third fact about Bob makes him eligible; the retain queues the recompute by itself.
      yield* retainDays("auto", 3, ["Bob moves to Berlin to teach chess."])
      const computed = yield* eventually(
        request("GET", `${bank("auto")}/entities/${bob}/trajectory`),
        (r) => r.status === 200
      )
      assert.strictEqual(computed.body.forecast_horizon, 3)
      assert.lengthOf(computed.body.viterbi_path, 3)
      const operations = yield* request("GET", `${bank("auto")}/operations?task_type=entity_trajectory_recompute`)
      assert.isAtLeast(operations.body.operations.length, 1)

      // Another fact makes the stored trajectory stale; the next retain recomputes it over four facts.
      yield* retainDays("auto", 4, ["Bob opens a chess school in Berlin."])
      const updated = yield* eventually(
        request("GET", `${bank("auto")}/entities/${bob}/trajectory`),
        (r) => r.body.viterbi_path.length === 4
      )
      assert.include(updated.body.viterbi_path[3].fact_preview, "chess school")
    }))
})

const llmModels = scriptedModels(onePurpose("consolidation", "labeller"))

const llmApp = scriptedApp({ operationMaxAttempts: 1, operationRetryBase: Duration.millis(5) }, llmModels)

layer(llmApp, { excludeTestServices: true })("entity trajectories with a language model", (it) => {
  it.effect("one structured call labels the facts; the prompt lists them in order and later the previous states", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      yield* retainDays("llm", 1, aliceFacts)
      const alice = yield* entityId("llm", "Alice")
      scripted.script({
        content: JSON.stringify({
          state_vocabulary: ["studying", "employed at acme"],
          labels: ["studying", "studying", "studying", "employed at acme", "employed at acme", "employed at acme"]
        })
      })
      yield* recompute("llm", alice)
      const trajectory = (yield* request("GET", `${bank("llm")}/entities/${alice}/trajectory`)).body
      assert.deepStrictEqual(trajectory.state_vocabulary, ["STUDYING", "EMPLOYED_AT_ACME"])
      assert.strictEqual(trajectory.current_state, "EMPLOYED_AT_ACME")
      assert.strictEqual(trajectory.llm_model, "openai/labeller")
      assert.strictEqual(trajectory.prompt_version, "v1")
      // Two transitions stay within STUDYING, one leaves it, two stay within EMPLOYED: (count + 0.1) / (total + 0.2).
      assert.deepStrictEqual(trajectory.transition_matrix, [
        [2.1 / 3.2, 1.1 / 3.2].map((p) => Number(p.toFixed(6))),
        [0.1 / 2.2, 2.1 / 2.2].map((p) => Number(p.toFixed(6)))
      ])
      assert.deepStrictEqual(trajectory.viterbi_path.map((step: any) => step.state), [
        "STUDYING",
        "STUDYING",
        "STUDYING",
        "EMPLOYED_AT_ACME",
        "EMPLOYED_AT_ACME",
        "EMPLOYED_AT_ACME"
      ])

      const first = scripted.chatRequests().at(-1)!.body
      const [system, user] = first.messages as Array<{ role: string; content: string }>
      assert.include(system!.content, "SCREAMING_SNAKE")
      assert.include(system!.content, "exactly one label per fact")
      assert.strictEqual(first.temperature, 0.2)
      assert.include(user!.content, "Entity: Alice")
      assert.include(user!.content, "Facts, oldest first (6):")
      assert.include(user!.content, "1. [2024-01-01, world] Alice studies chemistry at Oxford University.")
      assert.include(user!.content, "6. [2024-01-06, world] Alice was promoted to director")
      assert.notInclude(user!.content, "States used for this entity before")

      // The second labelling sees the states used before, so the vocabulary can stay stable.
      scripted.script({
        content: JSON.stringify({ state_vocabulary: ["STUDYING", "EMPLOYED_AT_ACME"], labels: ["STUDYING"] })
      })
      yield* recompute("llm", alice)
      const again = scripted.chatRequests().at(-1)!.body.messages[1].content as string
      assert.include(
        again,
        `States used for this entity before (reuse them while they still fit, add new ones when they do not): ["STUDYING","EMPLOYED_AT_ACME"]`
      )
      const padded = (yield* request("GET", `${bank("llm")}/entities/${alice}/trajectory`)).body
      assert.lengthOf(padded.viterbi_path, 6, "a short label list is padded to one label per fact")
    }))
})

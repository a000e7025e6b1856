/**
 * Dreams over HTTP with no language model (the offline default): the bank's `dream` settings merge field by field
 * with their preset and reject unknown values; a run is produced deterministically from a retained LoCoMo
 * conversation with checkable predictions, sanitised narrative HTML and proposals; approving a proposal makes it
 * recallable and approving twice is a 400; outcomes and statistics; a prediction whose window passes is checked
 * automatically against memories retained since the run; the influence signal reads the runs.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dreamSignalByMemory } from "../../src/dreams/DreamSignal.ts"
import { DreamWakeups } from "../../src/dreams/DreamWakeups.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../support/Locomo.ts"
import { bankPath, call, ok, operationFinished } from "../support/HttpCalls.ts"
import { testApp } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const bank = bankPath
const finished = operationFinished

/** Triggers a manual run and returns the operation's result once it finished. */
const dream = (id: string) =>
  Effect.gen(function*() {
    const queued = yield* ok("POST", `${bank(id)}/dreams/trigger`, { trigger_source: "manual", run_type: "dream" })
    const detail = yield* finished(id, queued.body.operation_id)
    assert.strictEqual(detail.status, "completed", JSON.stringify(detail))
    return (yield* call("GET", `${bank(id)}/operations/${queued.body.operation_id}/result`)).body.result
  })

layer(testApp(), { excludeTestServices: true, timeout: "3 minutes" })("dreams offline", (it) => {
  it.effect("dream settings: preset and own values merge field by field; bad values are 400s that change nothing", () =>
    Effect.gen(function*() {
      yield* ok("PUT", bank("settings"), {})
      const preset = yield* ok("PATCH", `${bank("settings")}/config`, {
        dream: { enabled: true, preset: "risk_guard" }
      })
      const effective = preset.body.config.dream
      // The preset's values, not the defaults', wherever the bank did not set its own (max_output_tokens 480 ≠ 500).
      assert.deepInclude(effective, {
        enabled: true,
        preset: "risk_guard",
        top_k: 5,
        min_recall_results: 3,
        max_output_tokens: 480,
        quality_threshold: 0.78,
        cooldown_minutes: 120,
        trance_enabled: false,
        trigger_mode: "hybrid"
      })
      assert.deepStrictEqual(effective.value_focus, { money: 0.9, time: 0.9, happiness: 1.2 })

      const own = yield* ok("PATCH", `${bank("settings")}/config`, { dream: { top_k: 7, value_focus: { money: 2 } } })
      assert.deepInclude(own.body.config.dream, {
        enabled: true,
        preset: "risk_guard",
        top_k: 7,
        min_recall_results: 3
      })
      assert.deepStrictEqual(own.body.config.dream.value_focus, { money: 2, time: 0.9, happiness: 1.2 })
      assert.deepStrictEqual(own.body.overrides.dream, {
        enabled: true,
        preset: "risk_guard",
        top_k: 7,
        value_focus: { money: 2 }
      })

      for (
        const [dreamBody, field] of [
          [{ trigger_mode: "weekly" }, "dream.trigger_mode"],
          [{ preset: "chaos" }, "dream.preset"],
          [{ top_k: 99 }, "dream.top_k"],
          [{ cron_interval_minutes: 1 }, "dream.cron_interval_minutes"],
          [{ value_focus: { money: 9 } }, "dream.value_focus.money"]
        ] as const
      ) {
        const bad = yield* call("PATCH", `${bank("settings")}/config`, { dream: dreamBody })
        assert.strictEqual(bad.status, 400, bad.text)
        assert.include(bad.body.detail, field)
      }
      const after = yield* ok("GET", `${bank("settings")}/config`)
      assert.deepStrictEqual(after.body.config.dream, own.body.config.dream)

      const reset = yield* ok("DELETE", `${bank("settings")}/config`)
      assert.strictEqual(reset.body.config.dream.enabled, false)
      assert.strictEqual(reset.body.config.dream.top_k, 4)
    }))

  it.effect("a trigger while dreams are disabled completes as skipped and stores no run", () =>
    Effect.gen(function*() {
      yield* ok("PUT", bank("disabled"), {})
      const result = yield* dream("disabled")
      assert.deepStrictEqual(result, { skipped: true, reason: "dream_disabled" })
      const runs = yield* ok("GET", `${bank("disabled")}/dreams`)
      assert.deepStrictEqual(runs.body.items, [])
      const missing = yield* call("POST", `${bank("nobody-here")}/dreams/trigger`)
      assert.strictEqual(missing.status, 404, missing.text)
      const badType = yield* call("POST", `${bank("disabled")}/dreams/trigger`, { run_type: "nap" })
      assert.strictEqual(badType.status, 400, badType.text)
    }))

  it.effect("a consolidation that creates observations triggers a dream run (event trigger)", () =>
    Effect.gen(function*() {
      const id = "event-dreams"
      yield* ok("PUT", bank(id), { enable_observations: true, dream: { enabled: true, trigger_mode: "event" } })
      yield* ok("POST", `${bank(id)}/memories`, {
        items: [
          "Ines repairs old bicycles in her garage every weekend.",
          "Ines sold a restored bicycle to her neighbour Paulo.",
          "Paulo rides the restored bicycle to work every day."
        ].map((content) => ({ content }))
      })
      const runs = yield* eventually(
        Effect.map(call("GET", `${bank(id)}/dreams`), (r) => r.body.items as Array<any>),
        (items) => items.length > 0,
        Duration.seconds(60)
      )
      assert.deepInclude(runs[0], { trigger_source: "event", run_type: "dream" })
      const operations = yield* ok("GET", `${bank(id)}/operations?task_type=dream_generation`)
      assert.isTrue(operations.body.operations.every((o: any) => o.status === "completed"), operations.text)
    }))

  it.effect.skipIf(!locomoAvailable)(
    "a LoCoMo conversation dreams deterministically; proposals, outcomes, expiry and stats",
    () =>
      Effect.gen(function*() {
        const id = "locomo-dreams"
        const sample = loadLocomo()[0]!
        for (const session of sessionsOf(sample).slice(0, 3)) {
          yield* ok("POST", `${bank(id)}/memories`, { items: session.items })
        }
        yield* ok("PATCH", `${bank(id)}/config`, { dream: { enabled: true, top_k: 8 } })

        const result = yield* dream(id)
        assert.strictEqual(result.generator, "deterministic", JSON.stringify(result))
        const runs = (yield* ok("GET", `${bank(id)}/dreams?limit=5`)).body.items
        assert.strictEqual(runs.length, 1)
        const run = runs[0]
        assert.strictEqual(run.status, "success", JSON.stringify(run))
        assert.deepInclude(run, {
          run_type: "dream",
          trigger_source: "manual",
          generator: "deterministic",
          legacy_run: false
        })
        assert.isAtLeast(run.evidence_basis.evidence_count, 2)
        assert.isAbove(run.evidence_basis.recurring_entities.length, 0, JSON.stringify(run.evidence_basis))
        const speaker = run.evidence_basis.recurring_entities[0].name
        assert.include(run.summary, speaker)
        assert.isAbove(run.predictions.length, 0)
        const prediction = run.predictions[0]
        assert.match(prediction.title, /will come up again within 14 days$/)
        assert.strictEqual(prediction.status, "pending")
        assert.isAbove(prediction.supporting_evidence_ids.length, 0)
        assert.isTrue(
          prediction.supporting_evidence_ids.every((e: string) => run.evidence_basis.recall_memory_ids.includes(e))
        )
        assert.include(run.narrative_html, "<article class=\"dream\">")
        assert.notInclude(run.narrative_html, "<script")
        assert.isAbove(run.confidence.overall, 0)
        assert.isAbove(run.quality_score, 0.65)

        // Approve an observation proposal: it becomes a recallable memory tagged with its run; twice is a 400.
        const proposal = run.promotion_proposals.find((p: any) => p.proposal_type === "observation")
        assert.isDefined(proposal, JSON.stringify(run.promotion_proposals))
        const approved = yield* ok("POST", `${bank(id)}/dreams/proposals/${proposal.id}/review`, {
          action: "approve",
          note: "good"
        })
        assert.strictEqual(approved.body.review_status, "approved")
        assert.isAtLeast(approved.body.approval_metadata.created_memories, 1)
        const twice = yield* call("POST", `${bank(id)}/dreams/proposals/${proposal.id}/review`, { action: "approve" })
        assert.strictEqual(twice.status, 400, twice.text)
        const recalled = yield* ok("POST", `${bank(id)}/memories/recall`, {
          query: proposal.content,
          tags: [`dream_run:${run.run_id}`],
          tags_match: "any_strict"
        })
        assert.isAbove(recalled.body.results.length, 0, recalled.text)
        const badAction = yield* call("POST", `${bank(id)}/dreams/proposals/${proposal.id}/review`, { action: "maybe" })
        assert.strictEqual(badAction.status, 400)
        const unknown = yield* call("POST", `${bank(id)}/dreams/proposals/nope/review`, { action: "reject" })
        assert.strictEqual(unknown.status, 404)

        // A user's outcome.
        const other = run.predictions.at(-1)
        const outcome = yield* ok("POST", `${bank(id)}/dreams/predictions/${other.id}/outcome`, {
          status: "request_more_evidence",
          note: "not sure yet",
          evidence_ids: []
        })
        assert.strictEqual(outcome.body.prediction.status, "unresolved")
        assert.deepInclude(outcome.body.outcome, {
          status: "request_more_evidence",
          recorded_by: "user",
          note: "not sure yet"
        })
        const badOutcome = yield* call("POST", `${bank(id)}/dreams/predictions/${other.id}/outcome`, { status: "meh" })
        assert.strictEqual(badOutcome.status, 400)

        // Automatic expiry: a memory about the first subject arrives, then its window passes (moved to two seconds
        // from now, as if the days had gone by). No request settles it: the scheduler wakes at the expiry and checks.
        const later = yield* ok("POST", `${bank(id)}/memories`, {
          items: [{ content: `${prediction.target_ref} talked about the new community garden project today.` }]
        })
        assert.strictEqual(later.status, 200)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE dream_predictions SET expires_at = now() + interval '2 seconds' WHERE run_id = ${run.run_id}`
        const wakeups = yield* DreamWakeups
        yield* wakeups.notify(id)
        const settled = yield* eventually(
          Effect.map(call("GET", `${bank(id)}/dreams`), (r) => r.body.items[0].predictions),
          (predictions: Array<any>) => predictions.every((p) => p.status !== "pending" && p.status !== "unresolved"),
          Duration.seconds(30)
        )
        const checked = settled.find((p: any) => p.id === prediction.id)
        assert.strictEqual(checked.status, "confirmed", JSON.stringify(checked))
        assert.include(checked.validation_notes, "checked automatically")
        const outcomes = yield* sql<{ recordedBy: string; evidenceIds: Array<string>; status: string }>`
        SELECT recorded_by, evidence_ids, status FROM dream_prediction_outcomes WHERE prediction_id = ${prediction.id}`
        assert.strictEqual(outcomes.length, 1)
        assert.strictEqual(outcomes[0]!.recordedBy, "system")
        assert.isAbove(outcomes[0]!.evidenceIds.length, 0)
        const memories = yield* ok("GET", `${bank(id)}/memories/list?limit=500`)
        const newIds = memories.body.items.filter((m: any) => m.text.includes("community garden")).map((m: any) => m.id)
        assert.isTrue(outcomes[0]!.evidenceIds.every((e) => newIds.includes(e)), JSON.stringify({ outcomes, newIds }))

        const stats = (yield* ok("GET", `${bank(id)}/dreams/stats`)).body
        const statuses = settled.map((p: any) => p.status)
        const confirmed = statuses.filter((s: string) => s === "confirmed").length
        const contradicted = statuses.filter((s: string) => s === "contradicted").length
        assert.deepInclude(stats, {
          bank_id: id,
          total_runs: 1,
          last_run_at: run.created_at,
          unresolved_prediction_backlog: 0,
          distilled_count: 1,
          failed_run_count: 0,
          duplicate_suppression_count: 0,
          prediction_confirmation_rate: Number((confirmed / (confirmed + contradicted)).toFixed(3))
        })
        assert.strictEqual(stats.avg_quality, run.quality_score)
        assert.strictEqual(stats.avg_tokens, 0)

        // The influence component: memories the run used as evidence, strongest weight 1.
        const signal = yield* dreamSignalByMemory(id, new Date(Date.now() - 3_600_000))
        assert.strictEqual(Math.max(...signal.values()), 1)
        for (const memoryId of prediction.supporting_evidence_ids) assert.isTrue(signal.has(memoryId))
      })
  )
})

/**
 * Recall while a dream waits on a slow language model. The server runs as a child process (`node src/main.ts`)
 * whose reflect model is a scripted OpenAI-compatible server on loopback that answers a dream only after 8 s. Each
 * round takes a baseline of sequential `recall`s on the seeded bank, triggers a dream, waits until its model
 * request has arrived, then times the same number of recalls while that request is still open. Target: recall p95
 * during the dream ≤ 1.2 × the baseline p95 of the same round, as the median over the rounds (the machine is
 * shared, so single rounds are noisy). Rerun: `node bench/dreams.ts [memories] [rounds]` (default 1000, 7).
 */
import { Effect } from "effect"
import { resolve } from "node:path"
import { scriptedOpenAi } from "../test/support/ScriptedOpenAi.ts"
import { recallQuestions } from "./support/Conversation.ts"
import { seedOverHttp, timedRecalls, waitFor } from "./support/HttpBank.ts"
import { json, percentile } from "./support/LoadClient.ts"
import { startServer, tempDir } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const memories = Number(process.argv[2] ?? 1000)
const rounds = Number(process.argv[3] ?? 7)
const recallsPerSample = 60
const modelDelayMs = 8000
const bank = "/v1/default/banks/dreams"
const questions = recallQuestions(11, recallsPerSample)

/** A dream answer that passes validation: the model's view of the evidence it was shown. */
const dreamAnswer = (prompt: string) => {
  const ids = [...prompt.matchAll(/^- \[([^\]]+)\]/gm)].map((m) => m[1]!)
  return JSON.stringify({
    summary: "The people in this bank keep returning to the same activities.",
    hypotheses: ["Weekend plans repeat."],
    predicted_next_events: [{
      title: "Another weekend outing",
      description: "The pattern of outings continues.",
      target_ref: "weekend",
      target_kind: "topic",
      horizon: "near_term",
      confidence: 0.6,
      success_criteria: ["A memory mentions a new outing."],
      expiration_window_days: 14,
      supporting_evidence_ids: ids.slice(0, 2)
    }],
    predicted_state_changes: [],
    growth_hypotheses: [],
    risks: [],
    opportunities: [],
    recommended_validations: [],
    promotion_proposals: [],
    narrative: "Outings repeat; expect another one soon."
  })
}

const operationStatus = async (url: string, id: string): Promise<string> =>
  (await json(url, { method: "GET", path: `${bank}/operations/${id}` })).status

const program = Effect.gen(function*() {
  const model = yield* scriptedOpenAi
  let slow = true
  model.setFallback((body: any) => ({
    content: dreamAnswer(String(body.messages.at(-1).content)),
    ...(slow ? { delayMs: modelDelayMs } : {})
  }))
  const server = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startServer(root, tempDir("engram-bench-dreams-"), {
        SERVICE_API_REFLECT_LLM_PROVIDER: "openai",
        SERVICE_API_REFLECT_LLM_BASE_URL: model.baseUrl,
        SERVICE_API_REFLECT_LLM_MODEL: "dreamer"
      })
    ),
    (server) => Effect.promise(() => server.stop())
  )
  const url = server.url

  yield* Effect.promise(async () => {
    // Retain queues consolidation; the rounds measure the dream alone, so they start once it is done.
    await seedOverHttp(url, bank, memories)
    await json(url, { method: "PATCH", path: `${bank}/config`, body: JSON.stringify({ dream: { enabled: true } }) })
    await timedRecalls(url, bank, questions) // warm-up
  })

  const results: Array<{ base50: number; base95: number; during50: number; during95: number; ratio: number }> = []
  for (let round = 0; round < rounds; round++) {
    const round_ = yield* Effect.promise(async () => {
      slow = true
      const baseTimes = await timedRecalls(url, bank, questions)
      const before = model.chatRequests().length
      const queued = await json(url, { method: "POST", path: `${bank}/dreams/trigger`, body: "{}" })
      await waitFor("the dream's model request", () => model.chatRequests().length > before)
      const sentAt = performance.now()
      const duringTimes = await timedRecalls(url, bank, questions)
      const stillWaiting = performance.now() - sentAt < modelDelayMs
      slow = false
      await waitFor(
        "the dream to finish",
        async () => ["completed", "failed"].includes(await operationStatus(url, queued.operation_id))
      )
      if (!stillWaiting) {
        throw new Error(`the recalls took longer than the model's ${modelDelayMs} ms: raise modelDelayMs`)
      }
      const [base50, base95, during50, during95] = [
        percentile(baseTimes, 0.5),
        percentile(baseTimes, 0.95),
        percentile(duringTimes, 0.5),
        percentile(duringTimes, 0.95)
      ]
      return { base50, base95, during50, during95, ratio: during95 / base95 }
    })
    results.push(round_)
    console.error(
      `round ${round + 1}: p95 ${round_.base95.toFixed(1)} → ${round_.during95.toFixed(1)} ms (${
        round_.ratio.toFixed(2)
      }×)`
    )
  }

  const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  console.log(
    `dreams: recall p95 while a dream waits ${modelDelayMs / 1000} s on its model, ${memories} memories, ` +
      `${recallsPerSample} recalls per sample, PGlite (child process)`
  )
  console.log("| round | p50 without a dream (ms) | p50 during | p95 without | p95 during | p95 ratio |")
  console.log("|---:|---:|---:|---:|---:|---:|")
  results.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${r.base50.toFixed(1)} | ${r.during50.toFixed(1)} | ${r.base95.toFixed(1)} | ` +
        `${r.during95.toFixed(1)} | ${r.ratio.toFixed(2)}× |`
    )
  )
  console.log(
    `median p50 ratio ${(median(results.map((r) => r.during50 / r.base50))).toFixed(2)}×, ` +
      `median p95 ratio ${median(results.map((r) => r.ratio)).toFixed(2)}× (target ≤ 1.2×)`
  )
})

Effect.runPromise(Effect.scoped(program)).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})

/**
 * The cross-encoder pass after the deterministic reranker: the best `maxCandidates` are scored by the model
 * and their score becomes a blend of the model's relevance and the deterministic score (which carries the
 * time-proximity and observation boosts). Bounded by the reranker's timeout: when the model is slow or fails,
 * the deterministic order stands and the trace says why.
 */
import { Clock, Effect, Option } from "effect"
import type { Reranker } from "../../models/Reranker.ts"
import type { RerankInput } from "./Fusion.ts"
import { byRerankedScore } from "./Candidates.ts"

type Ranked<T extends RerankInput> = T & { readonly score: number }

/** How much of the final score the cross-encoder decides for the candidates it read. */
const modelShare = 0.6

export interface CrossEncoderTrace {
  readonly model: string
  readonly candidates: number
  readonly duration_ms: number
  readonly outcome: "reranked" | "timed_out" | "failed"
  readonly error?: string
}

export const crossEncoderRerank = <T extends RerankInput>(
  reranker: Reranker["Service"],
  query: string,
  ranked: ReadonlyArray<Ranked<T>>
): Effect.Effect<{ readonly ranked: ReadonlyArray<Ranked<T>>; readonly trace: CrossEncoderTrace | null }> =>
  Effect.gen(function*() {
    if (ranked.length === 0) return { ranked, trace: null }
    const head = ranked.slice(0, reranker.maxCandidates)
    const started = yield* Clock.currentTimeMillis
    const outcome = yield* reranker.score(query, head.map((item) => item.text)).pipe(
      Effect.timeoutOption(reranker.timeout),
      Effect.map((scores) =>
        Option.match(scores, {
          onNone: () => ({ _tag: "timed_out" as const }),
          onSome: (value) => ({ _tag: "scored" as const, value })
        })
      ),
      Effect.catch((error) => Effect.succeed({ _tag: "failed" as const, message: error.message }))
    )
    const trace = (result: CrossEncoderTrace["outcome"], error?: string): CrossEncoderTrace => ({
      model: reranker.identity.model,
      candidates: head.length,
      duration_ms: 0,
      outcome: result,
      ...(error === undefined ? {} : { error })
    })
    const durationMs = (yield* Clock.currentTimeMillis) - started
    if (outcome._tag === "timed_out") {
      yield* Effect.logWarning(
        `reranker ${reranker.identity.model} took longer than its timeout; kept the deterministic order`
      )
      return { ranked, trace: { ...trace("timed_out"), duration_ms: durationMs } }
    }
    if (outcome._tag === "failed") {
      yield* Effect.logWarning(`reranker failed; kept the deterministic order: ${outcome.message}`)
      return { ranked, trace: { ...trace("failed", outcome.message), duration_ms: durationMs } }
    }
    const rescored = head.map((item, i) => ({
      ...item,
      score: modelShare * outcome.value[i]! + (1 - modelShare) * item.score
    }))
    const reordered = [...rescored, ...ranked.slice(head.length)].sort(byRerankedScore)
    return { ranked: reordered, trace: { ...trace("reranked"), duration_ms: durationMs } }
  })

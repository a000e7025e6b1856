/**
 * The one policy that bounds a reflect: how many searches the agent may ask for, how many evidence tokens its
 * prompt may carry, how long the whole reflect may take, and — derived from that same wall time — the deadline
 * of every model call in it. A model call never outlives the reflect: gathering stops at half the wall time so
 * the answer always has time left, and a structured-output pass gets the last fifth. Pure: no clock, no I/O.
 */
import type { Budget } from "../domain/Recall.ts"

interface Level {
  /** Model turns that may each run one more search after the initial one. */
  readonly searchTurns: number
  /** Evidence tokens (memories, observations, mental models) the prompt may carry in total. */
  readonly contextTokens: number
  /** Tokens one search may add (its recall `max_tokens`). */
  readonly tokensPerSearch: number
  /** Recall depth used by each search. */
  readonly recallBudget: Budget
  /** Multiple of the configured base wall time. */
  readonly wallFactor: number
}

export const budgetLevels: Readonly<Record<Budget, Level>> = {
  low: { searchTurns: 2, contextTokens: 6_000, tokensPerSearch: 2_000, recallBudget: "mid", wallFactor: 1 },
  mid: { searchTurns: 4, contextTokens: 12_000, tokensPerSearch: 3_000, recallBudget: "mid", wallFactor: 2 },
  high: { searchTurns: 8, contextTokens: 24_000, tokensPerSearch: 4_000, recallBudget: "high", wallFactor: 4 }
}

/** Below this much time left, a model call is not started: it could not finish usefully. */
export const minimumCallMs = 1_000

export interface ReflectBounds extends Level {
  readonly budget: Budget
  /** Maximum tokens of the answer (the request's `max_tokens`). */
  readonly answerTokens: number
  /** The whole reflect, from start to response. */
  readonly wallMs: number
  /** Offsets from the start by which each phase must end. */
  readonly gatherUntilMs: number
  readonly answerUntilMs: number
}

export const reflectBounds = (input: {
  readonly budget: Budget
  readonly maxTokens: number
  readonly baseWallMs: number
  readonly structured: boolean
}): ReflectBounds => {
  const level = budgetLevels[input.budget]
  const wallMs = input.baseWallMs * level.wallFactor
  return {
    ...level,
    budget: input.budget,
    answerTokens: input.maxTokens,
    wallMs,
    gatherUntilMs: Math.round(wallMs * 0.5),
    answerUntilMs: input.structured ? Math.round(wallMs * 0.8) : wallMs
  }
}

/** Output tokens a search decision may use: its JSON plus, when it answers at once, the whole answer. */
export const decisionTokens = (bounds: ReflectBounds) => bounds.answerTokens + 256

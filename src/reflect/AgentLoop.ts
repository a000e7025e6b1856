/**
 * Reflect's agentic loop over the configured language model. The model is shown the evidence found so far and
 * answers with a JSON action — run one more search, or answer — until it answers, its searches or evidence budget
 * run out, or the gathering deadline passes; then it is asked for the answer in plain markdown. With a
 * response_schema, one more turn turns the answer into JSON, validated and retried once with the reason.
 *
 * Failure policy: a model that misses the reflect's deadline (or times out) never fails the reflect — the answer
 * falls back to a labelled summary of the evidence; a model that cannot produce a usable search action is asked
 * for the answer directly; a provider that is down is a 503 the caller may retry.
 */
import { Clock, Effect, Option, Result, Schema } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import type { NotFound, ValidationError } from "../domain/Errors.ts"
import type { ReflectLlmCall, ReflectToolCall } from "../domain/Reflect.ts"
import type { LlmError, LlmMessage, LlmUsage } from "../models/Llm.ts"
import { addUsage, Llm, zeroUsage } from "../models/Llm.ts"
import { decisionTokens, minimumCallMs } from "./BudgetPolicy.ts"
import type { Synthesis } from "./OfflineSynthesis.ts"
import { synthesize, timeoutLabel } from "./OfflineSynthesis.ts"
import { answerTurn, searchTurn, structureTurn } from "./ReflectPrompt.ts"
import type { ToolContext } from "./ReflectTools.ts"
import { runTool, toolNames } from "./ReflectTools.ts"
import type { ResponseValidator } from "./StructuredOutput.ts"

export const SearchAction = Schema.Struct({
  tool: Schema.Literals([...toolNames, "answer"]),
  query: Schema.NullOr(Schema.String),
  answer: Schema.NullOr(Schema.String)
})

export interface AgentInput {
  readonly tools: ToolContext
  readonly question: string
  readonly system: string
  readonly startedAt: number
  readonly validator: ResponseValidator | undefined
  readonly operationId: string | undefined
}

export interface AgentOutcome {
  readonly text: string
  readonly structuredOutput: unknown
  readonly usage: LlmUsage
  readonly llmCalls: ReadonlyArray<ReflectLlmCall>
  readonly toolCalls: ReadonlyArray<ReflectToolCall>
  /** False when the model missed the deadline and the text is the labelled evidence summary. */
  readonly answeredByModel: boolean
  /** When the text is a summary: the memories and models it shows (otherwise the answer saw all the evidence). */
  readonly shown?: Synthesis | undefined
}

const unavailable = (error: LlmError) =>
  new ServiceUnavailable({ detail: `the language model failed during reflect: ${error.message}` })

export const runAgent = Effect.fn("Reflect.agent")(function*(
  input: AgentInput
): Effect.fn.Return<AgentOutcome, NotFound | ValidationError | ServiceUnavailable, Llm> {
  const llm = yield* Llm
  const { tools, question } = input
  const { bounds, evidence, bankId } = tools
  const llmCalls: Array<ReflectLlmCall> = []
  const toolCalls: Array<ReflectToolCall> = []
  let usage = zeroUsage
  const base = { purpose: "reflect" as const, bankId, operationId: input.operationId }
  const messages = (user: string): ReadonlyArray<LlmMessage> => [
    { role: "system", content: input.system },
    { role: "user", content: user }
  ]

  /**
   * One model call bounded by the phase's deadline. `None` when it did not finish in time (our deadline or the
   * provider's own timeout): the caller degrades instead of failing.
   */
  const call = <A>(scope: string, untilMs: number, effect: Effect.Effect<{ readonly usage: LlmUsage } & A, LlmError>) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const left = input.startedAt + untilMs - started
      if (left < minimumCallMs) return Option.none<A>()
      const result = yield* effect.pipe(
        Effect.timeoutOption(left),
        Effect.catchIf((error) => error.reason === "timeout", () => Effect.succeed(Option.none())),
        // Recorded however the call ends, so the trace shows failed and timed-out calls too.
        Effect.onExit(() =>
          Effect.map(Clock.currentTimeMillis, (now) => void llmCalls.push({ scope, duration_ms: now - started }))
        )
      )
      if (Option.isSome(result)) {
        usage = addUsage(usage, result.value.usage)
      }
      return result as Option.Option<A>
    })

  let answer: string | undefined
  const searchesDone: Array<string> = []
  for (let turn = 1; turn <= bounds.searchTurns && answer === undefined; turn++) {
    if (evidence.tokensLeft < 64) break
    const decision = yield* call<{ readonly value: typeof SearchAction.Type }>(
      "reflect.decide",
      bounds.gatherUntilMs,
      llm.generateObject({
        ...base,
        scope: "reflect.decide",
        objectName: "reflect_action",
        schema: SearchAction,
        maxOutputTokens: decisionTokens(bounds),
        messages: messages(
          searchTurn({ question, evidence, searchesLeft: bounds.searchTurns - turn + 1, searchesDone })
        )
      })
    ).pipe(
      // A model that cannot produce the action format can still answer in prose: go straight to the answer.
      Effect.catchIf((error) => error.reason === "invalid_output", () => Effect.succeed(Option.none())),
      Effect.mapError(unavailable)
    )
    if (Option.isNone(decision)) break
    const action = decision.value.value
    if (action.tool === "answer") {
      if (action.answer !== null && action.answer.trim() !== "") answer = action.answer.trim()
      break
    }
    const query = action.query?.trim() || question
    const run = yield* runTool(tools, action.tool, query, turn)
    toolCalls.push(run.call)
    searchesDone.push(`${action.tool}("${query}"): ${run.added} new`)
  }

  let shown: Synthesis | undefined
  if (answer === undefined) {
    const generated = yield* call<{ readonly text: string }>(
      "reflect.answer",
      bounds.answerUntilMs,
      llm.generateText({
        ...base,
        scope: "reflect.answer",
        maxOutputTokens: bounds.answerTokens,
        messages: messages(answerTurn({ question, evidence }))
      })
    ).pipe(Effect.mapError(unavailable))
    if (Option.isSome(generated) && generated.value.text.trim() !== "") {
      answer = generated.value.text.trim()
    } else {
      shown = synthesize({ question, evidence, label: timeoutLabel(Math.round(bounds.wallMs / 1000)) })
      answer = shown.text
    }
  }

  let structuredOutput: unknown = null
  const answeredByModel = shown === undefined
  if (input.validator !== undefined && answeredByModel) {
    const validator = input.validator
    const ask = (scope: string, conversation: ReadonlyArray<LlmMessage>) =>
      call<{ readonly text: string }>(
        scope,
        bounds.wallMs,
        llm.generateText({
          ...base,
          scope,
          maxOutputTokens: bounds.answerTokens,
          messages: conversation
        })
      ).pipe(Effect.mapError(unavailable))
    const first = messages(structureTurn({ question, answer, evidence, schema: validator.jsonSchema }))
    const firstReply = yield* ask("reflect.structure", first)
    if (Option.isSome(firstReply)) {
      const checked = validator.validate(firstReply.value.text)
      if (Result.isSuccess(checked)) {
        structuredOutput = checked.success
      } else {
        const secondReply = yield* ask("reflect.structure_retry", [
          ...first,
          { role: "assistant", content: firstReply.value.text.slice(0, 4000) || "(no answer)" },
          {
            role: "user",
            content: `Your previous answer could not be used: ${checked.failure}. ` +
              "Reply again with only the JSON value, exactly matching the JSON Schema."
          }
        ])
        const second = Option.map(secondReply, (reply) => validator.validate(reply.text))
        if (Option.isSome(second) && Result.isSuccess(second.value)) {
          structuredOutput = second.value.success
        } else if (Option.isSome(second) && Result.isFailure(second.value)) {
          return yield* new ServiceUnavailable({
            detail:
              `the language model did not produce output matching response_schema after one retry: ${second.value.failure}`
          })
        }
      }
    }
  }

  return { text: answer, structuredOutput, usage, llmCalls, toolCalls, answeredByModel, shown }
})

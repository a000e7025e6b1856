/**
 * Reflect: answers a question from a bank's memories. It first searches mental models, observations and facts
 * for the question itself, then — with a language model — lets the agent loop search further and answer under
 * the bank's mission, directives and disposition; without one it answers with a labelled deterministic summary.
 * `submit` runs the same as a durable `reflect` operation. After a model-written answer it queues
 * `form_opinion` (once per operation, however often it runs), so the bank may keep what it concluded. It reads
 * only: it never waits for the bank's write lock.
 */
import { Clock, Context, Duration, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { AccessTelemetry, CurrentAccessSource } from "../activity/AccessTelemetry.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { Directives } from "../directives/Directives.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { ReflectRequest as ReflectRequestSchema } from "../domain/Reflect.ts"
import type { ReflectRequest, ReflectResponse, ReflectToolCall } from "../domain/Reflect.ts"
import type { TagGroup } from "../domain/Recall.ts"
import { Recall } from "../memory/recall/Recall.ts"
import { Llm, usageJson } from "../models/Llm.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import type { AgentOutcome } from "./AgentLoop.ts"
import { runAgent } from "./AgentLoop.ts"
import { reflectBounds } from "./BudgetPolicy.ts"
import { Evidence, toBasedOnMemory, toBasedOnModel } from "./Evidence.ts"
import { MentalModelSource } from "./MentalModelSource.ts"
import type { Synthesis } from "./OfflineSynthesis.ts"
import { offlineLabel, synthesize } from "./OfflineSynthesis.ts"
import { systemPrompt } from "./ReflectPrompt.ts"
import type { ToolContext } from "./ReflectTools.ts"
import { runTool, toolNames } from "./ReflectTools.ts"
import { responseValidator } from "./StructuredOutput.ts"

export type ReflectError = NotFound | ValidationError | ServiceUnavailable

export interface ReflectOptions {
  /** The background operation this reflect runs for (recorded on its model calls). */
  readonly operationId?: string | undefined
  /** Mental models this reflect must not read, e.g. the one it is regenerating. */
  readonly excludeMentalModels?: ReadonlyArray<string> | undefined
  /** Whether a `form_opinion` operation may follow a model-written answer (default true). */
  readonly formOpinion?: boolean | undefined
}

/** The tags a reflect reads: its `tags`, or every tag its tag groups name. Directives are scoped by them. */
const scopeTags = (request: ReflectRequest): ReadonlyArray<string> => {
  if (request.tags && request.tags.length > 0) return request.tags
  const leaves = (group: TagGroup): ReadonlyArray<string> =>
    "tags" in group
      ? group.tags
      : "and" in group
      ? group.and.flatMap(leaves)
      : "or" in group
      ? group.or.flatMap(leaves)
      : []
  return [...new Set((request.tag_groups ?? []).flatMap(leaves))]
}

const decodeRequest = Schema.decodeUnknownEffect(ReflectRequestSchema)

/** The outcome of a reflect without a language model: the labelled summary, no model calls, no usage. */
const offlineOutcome = (synthesis: Synthesis): AgentOutcome => ({
  text: synthesis.text,
  structuredOutput: null,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  llmCalls: [],
  toolCalls: [],
  answeredByModel: false,
  shown: synthesis
})

export class Reflect extends Context.Service<Reflect, {
  readonly reflect: (
    bankId: string,
    request: ReflectRequest,
    options?: ReflectOptions
  ) => Effect.Effect<ReflectResponse, ReflectError>
  /** Checks the request, then queues it as a `reflect` operation whose result is the ReflectResponse. */
  readonly submit: (
    bankId: string,
    request: ReflectRequest
  ) => Effect.Effect<{ readonly operationId: string }, NotFound | ValidationError>
}>()("engram/reflect/Reflect") {
  static readonly layer = Layer.effect(
    Reflect,
    Effect.gen(function*() {
      const banks = yield* Banks
      const recall = yield* Recall
      const llm = yield* Llm
      const directives = yield* Directives
      const models = yield* MentalModelSource
      const operations = yield* Operations
      const config = yield* EngramConfig
      const registry = yield* TaskRegistry
      const sql = yield* SqlClient.SqlClient
      const telemetry = yield* AccessTelemetry

      /**
       * Whether the `reflect` operation already queued its `form_opinion`: a re-run (after a crash or a retry)
       * must not queue a second one. A reflect outside an operation has nothing to repeat.
       */
      const opinionQueuedBy = (bankId: string, operationId: string | undefined) =>
        operationId === undefined ? Effect.succeed(false) : sql`
          SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = 'form_opinion'
            AND payload->>'reflect_operation_id' = ${operationId}
          LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

      /** Everything that can be rejected before any work: conflicting scopes and an unusable response_schema. */
      const check = (request: ReflectRequest) =>
        Effect.gen(function*() {
          if (request.tags && request.tags.length > 0 && request.tag_groups && request.tag_groups.length > 0) {
            return yield* ValidationError.single("tag_groups", "tags and tag_groups cannot be used together")
          }
          if (request.response_schema === undefined || request.response_schema === null) return undefined
          const validator = responseValidator(request.response_schema)
          return Result.isSuccess(validator) ? validator.success : yield* validator.failure
        })

      const reflect = Effect.fn("Reflect.reflect")(function*(
        bankId: string,
        request: ReflectRequest,
        options: ReflectOptions = {}
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const validator = yield* check(request)
        const bank = yield* banks.get(bankId)
        const question = request.context && request.context.trim() !== ""
          ? `${request.query}\n\nContext: ${request.context.trim()}`
          : request.query
        const scope = scopeTags(request)
        const rules = yield* directives.applicable(bankId, scope)
        const bounds = reflectBounds({
          budget: request.budget ?? "low",
          maxTokens: request.max_tokens ?? 4096,
          baseWallMs: Duration.toMillis(config.reflectTimeout),
          structured: validator !== undefined
        })
        const evidence = new Evidence(bounds.contextTokens)
        const tools: ToolContext = {
          bankId,
          request,
          bounds,
          evidence,
          recall,
          models,
          excludeModels: options.excludeMentalModels ?? [],
          traceOutput: request.include?.tool_calls?.output ?? true
        }
        // The first searches are for the question itself, at iteration 0: the model (or the offline summary)
        // always starts from the best the bank has, and follow-up searches are the model's choice.
        const seeded: Array<ReflectToolCall> = []
        for (const tool of toolNames) seeded.push((yield* runTool(tools, tool, question, 0)).call)

        const online = llm.available("reflect")
        const outcome = online
          ? yield* runAgent({
            tools,
            question,
            system: systemPrompt({
              mission: bank.reflectMission,
              directives: rules,
              disposition: bank.disposition,
              today: new Date(startedAt).toISOString().slice(0, 10)
            }),
            startedAt,
            validator,
            operationId: options.operationId
          }).pipe(Effect.provideService(Llm, llm))
          : offlineOutcome(synthesize({ question, evidence, label: offlineLabel }))
        const memories = outcome.shown?.memories ?? evidence.memories
        const shownModels = outcome.shown?.models ?? evidence.models
        // The memories came through recall (recorded there, as this reflect's); the mental models it read are added.
        yield* telemetry.record(
          bankId,
          shownModels.map((model) => ({ type: "mental_model" as const, id: model.id, score: null }))
        )

        const formsOpinion = outcome.answeredByModel && options.formOpinion !== false && !evidence.isEmpty
        if (formsOpinion && !(yield* opinionQueuedBy(bankId, options.operationId))) {
          yield* operations.submit({
            bankId,
            taskType: "form_opinion",
            payload: {
              query: question,
              answer: outcome.text,
              memory_ids: evidence.memories.map((memory) => memory.id),
              // The scope the reflect read (its tags or its tag groups' tags), so the opinion stays in that scope.
              tags: scope,
              ...(options.operationId === undefined ? {} : { reflect_operation_id: options.operationId })
            }
          })
        }

        return {
          text: outcome.text,
          based_on: request.include?.facts === undefined || request.include.facts === null ? null : {
            memories: memories.map(toBasedOnMemory),
            mental_models: shownModels.map(toBasedOnModel),
            // A summary written without the model follows no rule, so it claims none.
            directives: (outcome.answeredByModel ? rules : [])
              .map((rule) => ({ id: rule.id, name: rule.name, content: rule.content }))
          },
          structured_output: validator === undefined ? null : outcome.structuredOutput,
          usage: usageJson(outcome.usage),
          trace: request.include?.tool_calls === undefined || request.include.tool_calls === null ? null : {
            tool_calls: [...seeded, ...outcome.toolCalls],
            llm_calls: outcome.llmCalls
          }
        } satisfies ReflectResponse
      }, (effect) => Effect.provideService(effect, CurrentAccessSource, "reflect"))

      const submit = Effect.fn("Reflect.submit")(function*(bankId: string, request: ReflectRequest) {
        yield* check(request)
        yield* banks.get(bankId)
        const operation = yield* operations.submit({ bankId, taskType: "reflect", payload: request })
        return { operationId: operation.id }
      })

      yield* registry.register("reflect", (operation) =>
        Effect.gen(function*() {
          const request = yield* decodeRequest(operation.payload).pipe(
            Effect.mapError(() =>
              new TaskFailure({ message: "the stored reflect request is invalid", retryable: false })
            )
          )
          return yield* reflect(operation.bankId, request, { operationId: operation.id }).pipe(
            Effect.mapError((error) =>
              new TaskFailure({ message: error.detail, retryable: error._tag === "ServiceUnavailable" })
            )
          )
        }))

      return Reflect.of({ reflect, submit })
    })
  )
}

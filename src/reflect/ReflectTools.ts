/**
 * The tools reflect's agent may use — search mental models, search observations (and the bank's opinions), recall
 * raw facts — each reading only within the request's tag scope and adding what it finds to the evidence within the
 * token budget. Every run is recorded for the trace with its input, output, duration and iteration.
 */
import { Clock, Effect } from "effect"
import type { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import type { ReflectRequest, ReflectToolCall } from "../domain/Reflect.ts"
import type { Recall } from "../memory/recall/Recall.ts"
import type { ReflectBounds } from "./BudgetPolicy.ts"
import type { Evidence } from "./Evidence.ts"
import type { MentalModelSource } from "./MentalModelSource.ts"

export const toolNames = ["search_mental_models", "search_observations", "recall"] as const
export type ToolName = typeof toolNames[number]

export const toolDescriptions: Readonly<Record<ToolName, string>> = {
  search_mental_models: "curated summaries the bank maintains on recurring topics (best first choice when one fits)",
  search_observations: "consolidated observations and the bank's own opinions, each distilled from several facts",
  recall: "raw facts: what was said, done or experienced, with dates (most detailed, use for specifics)"
}

/** Mental models shown per search: each is a whole summary, so few are enough. */
const modelsPerSearch = 3

export interface ToolContext {
  readonly bankId: string
  readonly request: ReflectRequest
  readonly bounds: ReflectBounds
  readonly evidence: Evidence
  readonly recall: Recall["Service"]
  readonly models: MentalModelSource["Service"]
  readonly excludeModels: ReadonlyArray<string>
  /** Whether tool outputs go into the trace (`include.tool_calls.output`). */
  readonly traceOutput: boolean
}

const scopeOf = (request: ReflectRequest) => ({
  ...(request.tags ? { tags: request.tags } : {}),
  ...(request.tags_match ? { tags_match: request.tags_match } : {}),
  ...(request.tag_groups ? { tag_groups: request.tag_groups } : {}),
  ...(request.branch_name ? { branch_name: request.branch_name } : {})
})

/** Runs one tool; a search that finds nothing new is a normal outcome, not an error. */
export const runTool = Effect.fn("ReflectTools.run")(function*(
  context: ToolContext,
  tool: ToolName,
  query: string,
  iteration: number
): Effect.fn.Return<
  { readonly call: ReflectToolCall; readonly added: number },
  NotFound | ValidationError | ServiceUnavailable
> {
  const started = yield* Clock.currentTimeMillis
  const { evidence, request } = context
  const tokens = Math.min(context.bounds.tokensPerSearch, evidence.tokensLeft)
  let output: unknown
  let added: number
  if (tool === "search_mental_models") {
    const hits = yield* context.models.search(context.bankId, query, {
      tags: request.tags,
      tagsMatch: request.tags_match,
      tagGroups: request.tag_groups,
      exclude: context.excludeModels
    }, modelsPerSearch)
    const shown = evidence.addModels(hits, tokens)
    added = shown.length
    output = {
      mental_models: shown.map((model) => ({ ref: model.ref, id: model.id, name: model.name, content: model.content }))
    }
  } else {
    const types = tool === "recall" ? ["world", "experience"] as const : ["observation", "opinion"] as const
    const response = tokens <= 0 ? { results: [] } : yield* context.recall.recall(context.bankId, {
      query,
      types: [...types],
      budget: context.bounds.recallBudget,
      max_tokens: tokens,
      include: { entities: null },
      ...scopeOf(request)
    })
    const shown = evidence.addMemories(response.results)
    added = shown.length
    output = {
      memories: shown.map((memory) => ({
        ref: memory.ref,
        id: memory.id,
        type: memory.type,
        text: memory.text,
        occurred_start: memory.occurredStart
      })),
      already_known: response.results.length - shown.length
    }
  }
  const duration = (yield* Clock.currentTimeMillis) - started
  return {
    call: {
      tool,
      input: { query, ...(tool === "search_mental_models" ? {} : { max_tokens: tokens }) },
      output: context.traceOutput ? output : null,
      duration_ms: duration,
      iteration
    },
    added
  }
})

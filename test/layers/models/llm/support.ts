/**
 * Builds `LlmLive` against the scripted model server for the LLM tests, with traces kept in memory instead of
 * the database (the trace table itself is covered over HTTP in test/traces/traces.http.test.ts).
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { llmSettings, type ProviderInput } from "../../../../layers/models/llm/LlmConfig.ts"
import * as LlmLive from "../../../../layers/models/llm/LlmLive.ts"
import type { LlmRequest } from "../../../../src/models/Llm.ts"
import type { NewLlmTrace } from "../../../../src/traces/LlmTraceStore.ts"
import { LlmTraceStore } from "../../../../src/traces/LlmTraceStore.ts"

export const memoryTraces = () => {
  const traces: Array<NewLlmTrace> = []
  const layer = Layer.succeed(LlmTraceStore)(LlmTraceStore.of({
    record: (trace) => Effect.sync(() => void traces.push(trace)),
    list: () => Effect.succeed({ items: [], total: 0 }),
    stats: () => Effect.succeed([]),
    usageForOperation: () => Effect.succeed({ calls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 })
  }))
  return { traces, layer }
}

/** An `Llm` over the given provider settings with fast retries, and the traces it records. */
export const makeLlm = (input: Parameters<typeof llmSettings>[0] & ProviderInput) =>
  Effect.gen(function*() {
    const { traces, layer } = memoryTraces()
    const llm = yield* LlmLive.make(llmSettings({ retryBase: "5 millis", timeout: "5 seconds", ...input })).pipe(
      Effect.provide([FetchHttpClient.layer, layer])
    )
    return { llm, traces }
  })

export const request = (content: string, overrides: Partial<LlmRequest> = {}): LlmRequest => ({
  purpose: "retain",
  scope: "test.scope",
  bankId: "bank-1",
  operationId: "op-1",
  messages: [{ role: "system", content: "You extract facts." }, { role: "user", content }],
  ...overrides
})

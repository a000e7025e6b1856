/**
 * A dry run of retain's extraction: the content is chunked and extracted exactly as retain would (the bank's
 * settings, each overridable in the request to try a candidate configuration) and the candidate facts are
 * returned. Nothing is stored — no chunks, facts, entities, links or embeddings — so the bank is unchanged.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { Banks } from "../../bank/Banks.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { NotFound, ServiceUnavailable } from "../../domain/Errors.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"
import type { DryRunExtractRequest } from "../../domain/MemoryOps.ts"
import { addUsage, Llm, usageJson, zeroUsage } from "../../models/Llm.ts"
import type { ExtractedFact } from "./ExtractedFact.ts"
import { extractWithLlm } from "./LlmExtractor.ts"
import { extractOffline } from "./OfflineExtractor.ts"
import { chunkText } from "./Tokens.ts"

export interface DryRunResult {
  readonly facts: ReadonlyArray<{
    text: string
    fact_type: string
    occurred_start: string | null
    occurred_end: string | null
    entities: ReadonlyArray<string>
  }>
  readonly usage: { input_tokens: number; output_tokens: number; total_tokens: number }
}

export class DryRunExtract extends Context.Service<DryRunExtract, {
  readonly run: (
    bankId: string,
    request: DryRunExtractRequest
  ) => Effect.Effect<DryRunResult, NotFound | ServiceUnavailable>
}>()("engram/memory/retain/DryRunExtract") {
  static readonly layer = Layer.effect(
    DryRunExtract,
    Effect.gen(function*() {
      const banks = yield* Banks
      const llm = yield* Llm
      const config = yield* EngramConfig

      const run = Effect.fn("DryRunExtract.run")(function*(bankId: string, request: DryRunExtractRequest) {
        const bank = yield* banks.get(bankId)
        const now = new Date(yield* Clock.currentTimeMillis)
        const mentionedAt = request.timestamp === undefined || request.timestamp === null
          ? now
          : request.timestamp === "unset"
          ? null
          : new Date(request.timestamp)
        const speaker = request.agent_name ? `speaker: ${request.agent_name}` : null
        const context = [request.context ?? null, speaker].filter((part) => part !== null && part !== "").join("; ")
        const chunkSize = request.retain_chunk_size ?? bank.retainChunkSize ?? config.defaultChunkSize
        const facts: Array<ExtractedFact> = []
        let usage = zeroUsage
        for (const text of chunkText(request.content, chunkSize)) {
          const input = {
            text,
            context: context === "" ? null : context,
            mentionedAt,
            mode: request.retain_extraction_mode ?? bank.retainExtractionMode ?? "concise",
            mission: request.retain_mission ?? bank.retainMission,
            customInstructions: request.retain_custom_instructions ?? bank.retainCustomInstructions
          }
          if (llm.available("retain")) {
            const extracted = yield* extractWithLlm(input, { bankId }).pipe(
              Effect.provideService(Llm, llm),
              Effect.mapError((error) =>
                new ServiceUnavailable({ detail: `the language model failed during extraction: ${error.message}` })
              )
            )
            facts.push(...extracted.facts)
            usage = addUsage(usage, extracted.usage)
          } else {
            facts.push(...extractOffline(input))
            yield* Effect.yieldNow
          }
        }
        return {
          facts: facts.map((fact) => ({
            text: fact.text,
            fact_type: fact.factType,
            occurred_start: iso(fact.occurredStart),
            occurred_end: iso(fact.occurredEnd),
            entities: [...new Set(fact.entities.map((entity) => entity.name))]
          })),
          usage: usageJson(usage)
        }
      })

      return DryRunExtract.of({ run })
    })
  )
}

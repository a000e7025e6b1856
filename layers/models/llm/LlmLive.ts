/**
 * `Llm` over the configured providers: the model serving each purpose, a timeout per request, retries with
 * exponential backoff and jitter on transient failures only (429, 5xx, timeouts, connection errors), JSON
 * extraction and repair for structured output with one corrective retry, and a trace row for every request.
 * With provider `none` a purpose is unavailable and its calls fail at once, without touching the network.
 */
import { Cause, Clock, Duration, Effect, Exit, Layer, Option, Redacted, Result, Schedule, Schema } from "effect"
import type { AiError, LanguageModel, Response, Tool } from "effect/ai"
import { type Prompt, Telemetry } from "effect/ai"
import type { LlmMessage, LlmProbe, LlmPurpose, LlmRequest, LlmUsage } from "../../../src/models/Llm.ts"
import { addUsage, Llm, LlmError, zeroUsage } from "../../../src/models/Llm.ts"
import { LlmTraceStore } from "../../../src/traces/LlmTraceStore.ts"
import * as AnthropicMessages from "./AnthropicMessages.ts"
import * as GeminiGenerate from "./GeminiGenerate.ts"
import { extractJson, stripReasoning } from "../../../src/models/JsonRepair.ts"
import type { LlmSettings, ProviderSettings } from "./LlmConfig.ts"
import { llmSettingsFromEnv } from "./LlmConfig.ts"
import { isTransient, labelOf, timedOut, toLlmError, unavailable } from "./LlmFailures.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import { scrub } from "./ProviderHttp.ts"
import type { ProviderModel } from "./ProviderParts.ts"
import { GenerationOptions } from "./ProviderParts.ts"

interface Target {
  readonly settings: ProviderSettings
  readonly provider: Option.Option<ProviderModel>
}

/** What one request produced: the raw answer, its usage and, for structured output, the value or what is wrong. */
interface Answer<A> {
  readonly text: string
  readonly usage: LlmUsage
  readonly value: Result.Result<A, string>
}

const usageOf = (usage: Response.Usage | undefined): LlmUsage => {
  const inputTokens = usage?.inputTokens.total ?? 0
  const outputTokens = usage?.outputTokens.total ?? 0
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}

const answerOf = <Tools extends Record<string, Tool.Any>>(parts: ReadonlyArray<Response.AllParts<Tools>>) => ({
  text: parts.flatMap((part) => part.type === "text" ? [part.text] : []).join(""),
  usage: usageOf(parts.find((part): part is Response.FinishPart => part.type === "finish")?.usage)
})

const toPrompt = (messages: ReadonlyArray<LlmMessage>): Prompt.RawInput =>
  messages.map((message) => ({ role: message.role, content: message.content }))

const transcript = (messages: ReadonlyArray<LlmMessage>) =>
  messages.map((message) => `[${message.role}]\n${message.content}`).join("\n\n")

/** How much of a rejected answer is echoed back to the model in the corrective retry. */
const echoLimit = 4000
const bound = (text: string, limit: number) => text.length > limit ? `${text.slice(0, limit)}…` : text

const providerFor = (settings: ProviderSettings) => {
  switch (settings.provider) {
    case "openai":
      return OpenAiCompatible.make(settings)
    case "anthropic":
      return AnthropicMessages.make(settings)
    case "gemini":
      return GeminiGenerate.make(settings)
  }
  return undefined
}

/** A request's trace fields from how it ended: answered, answered unusably, failed, interrupted or crashed. */
const outcomeOf = (exit: Exit.Exit<Answer<unknown>, LlmError>) =>
  Exit.match(exit, {
    onSuccess: (answer) => ({
      status: Result.isSuccess(answer.value) ? "success" as const : "error" as const,
      errorReason: Result.isSuccess(answer.value) ? undefined : "invalid_output",
      errorMessage: Result.isSuccess(answer.value) ? undefined : answer.value.failure,
      usage: answer.usage,
      output: answer.text
    }),
    onFailure: (cause) => {
      const error = Option.getOrUndefined(Cause.findErrorOption(cause))
      const interrupted = error === undefined && Cause.hasInterruptsOnly(cause)
      return {
        status: "error" as const,
        errorReason: error?.reason ?? (interrupted ? "interrupted" : "defect"),
        errorMessage: error?.message ?? (interrupted ? "the call was interrupted" : "the call failed unexpectedly"),
        usage: zeroUsage,
        output: undefined
      }
    }
  })

const purposes: ReadonlyArray<LlmPurpose> = ["retain", "consolidation", "reflect"]

export const make = Effect.fnUntraced(function*(settings: LlmSettings) {
  const store = yield* LlmTraceStore

  const build = Effect.fnUntraced(function*(config: ProviderSettings) {
    const provider = providerFor(config)
    return {
      settings: config,
      provider: provider === undefined ? Option.none() : Option.some(yield* provider)
    } satisfies Target
  })
  const targets: Record<LlmPurpose, Target> = {
    retain: yield* build(settings.purposes.retain),
    reflect: yield* build(settings.purposes.reflect),
    consolidation: yield* build(settings.purposes.consolidation)
  }

  const providerOf = (purpose: LlmPurpose) =>
    Option.match(targets[purpose].provider, {
      onNone: () => Effect.fail(unavailable(purpose)),
      onSome: (provider) => Effect.succeed({ target: targets[purpose], provider })
    })

  /**
   * Sends one request per attempt, each bounded by the timeout and traced however it ends, and retries
   * transient failures with exponential backoff and jitter.
   */
  const send = <A, R>(
    target: Target,
    request: LlmRequest,
    messages: ReadonlyArray<LlmMessage>,
    call: Effect.Effect<Answer<A>, AiError.AiError, R>
  ): Effect.Effect<Answer<A>, LlmError, R> => {
    let attempts = 0
    const once = Effect.gen(function*() {
      const attempt = ++attempts
      yield* Effect.annotateCurrentSpan("engram.llm.attempt", attempt)
      const startedAt = yield* Clock.currentTimeMillis
      const record = (exit: Exit.Exit<Answer<A>, LlmError>) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.record({
            bankId: request.bankId,
            operationId: request.operationId,
            purpose: request.purpose,
            scope: request.scope,
            provider: target.settings.provider,
            model: target.settings.model,
            attempt,
            durationMs: now - startedAt,
            input: transcript(messages),
            createdAt: new Date(startedAt),
            ...outcomeOf(exit)
          }))
      return yield* call.pipe(
        Effect.mapError((error) => toLlmError(target.settings, error)),
        Effect.timeoutOrElse({
          duration: settings.timeout,
          orElse: () => Effect.fail(timedOut(target.settings, settings.timeout))
        }),
        Effect.onExit(record),
        Effect.tapError((error) =>
          isTransient(error) && attempt <= settings.maxRetries
            ? Effect.logWarning(`LLM request failed, retrying: ${error.message}`)
            : Effect.void
        )
      )
    }).pipe(
      // One span per attempt with the OpenTelemetry GenAI attributes: who was asked and what it cost. Never the
      // prompt or the answer (they hold users' memories) and never the key.
      Effect.tap((answer) =>
        Effect.annotateCurrentSpan({
          "gen_ai.usage.input_tokens": answer.usage.inputTokens,
          "gen_ai.usage.output_tokens": answer.usage.outputTokens
        })
      ),
      Effect.withSpan("Llm.request", {
        kind: "client",
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": target.settings.provider,
          "gen_ai.request.model": target.settings.model,
          "engram.llm.purpose": request.purpose
        }
      })
    )
    return once.pipe(
      Effect.retry({
        schedule: Schedule.exponential(settings.retryBase).pipe(Schedule.jittered),
        times: settings.maxRetries,
        while: isTransient
      }),
      Effect.provideService(GenerationOptions, {
        maxOutputTokens: request.maxOutputTokens,
        temperature: request.temperature
      })
    )
  }

  const generateText = Effect.fn("Llm.generateText")(function*(request: LlmRequest) {
    yield* Effect.annotateCurrentSpan({ purpose: request.purpose, scope: request.scope })
    const { target, provider } = yield* providerOf(request.purpose)
    const call = Effect.map(
      provider.model.generateText({ prompt: toPrompt(request.messages) }),
      (response): Answer<void> => ({
        text: response.text,
        usage: usageOf(response.usage),
        value: Result.succeed(undefined)
      })
    )
    const answer = yield* send(target, request, request.messages, call)
    return { text: stripReasoning(answer.text), usage: answer.usage }
  })

  const generateObject = Effect.fn("Llm.generateObject")(function*<S extends Schema.Top>(
    request: LlmRequest & { readonly schema: S; readonly objectName: string }
  ) {
    yield* Effect.annotateCurrentSpan({ purpose: request.purpose, scope: request.scope, object: request.objectName })
    const { target, provider } = yield* providerOf(request.purpose)
    const { codec, jsonSchema } = yield* Effect.try({
      try: () => provider.codecTransformer(request.schema as never),
      catch: (error) =>
        new LlmError({
          reason: "invalid_output",
          message: `the ${request.objectName} schema cannot be expressed as JSON Schema: ${String(error)}`,
          retryable: false
        })
    })
    const decode = Schema.decodeUnknownEffect(
      codec as unknown as Schema.Codec<S["Type"], unknown, S["DecodingServices"]>
    )

    /** Extracts, reshapes and validates; the failure text is what the corrective retry tells the model. */
    const repair = (text: string) => {
      const candidate = extractJson(text, jsonSchema as Record<string, unknown>)
      if (Result.isFailure(candidate)) return Effect.succeed(Result.fail(candidate.failure))
      return decode(candidate.success, { errors: "all" }).pipe(
        Effect.map((value) => Result.succeed(value)),
        Effect.catchTag(
          "SchemaError",
          (error) => Effect.succeed(Result.fail(`the JSON did not match the schema: ${bound(error.message, 1500)}`))
        )
      )
    }

    const ask = Effect.fnUntraced(function*(messages: ReadonlyArray<LlmMessage>) {
      // The span transformer sees the raw answer and its usage even when effect/ai's strict decoding fails;
      // a transformer the caller installed still runs.
      const outer = yield* Effect.serviceOption(Telemetry.CurrentSpanTransformer)
      let seen = { text: "", usage: zeroUsage }
      const observe: Telemetry.SpanTransformer = (options) => {
        seen = answerOf(options.response)
        if (Option.isSome(outer)) outer.value(options)
      }
      const model: LanguageModel.LanguageModel = provider.model
      const call = model.generateObject({
        prompt: toPrompt(messages),
        objectName: request.objectName,
        schema: request.schema as unknown as Schema.Codec<S["Type"], Record<string, unknown>>
      }).pipe(
        Effect.map((response): Answer<S["Type"]> => ({
          text: response.text,
          usage: usageOf(response.usage),
          value: Result.succeed(response.value)
        })),
        Effect.catchReason(
          "AiError",
          "StructuredOutputError",
          () => Effect.map(repair(seen.text), (value): Answer<S["Type"]> => ({ ...seen, value }))
        ),
        Effect.provideService(Telemetry.CurrentSpanTransformer, observe)
      )
      return yield* send(target, request, messages, call)
    })

    const first = yield* ask(request.messages)
    if (Result.isSuccess(first.value)) return { value: first.value.success, usage: first.usage }
    const rejected = stripReasoning(first.text)
    const second = yield* ask([
      ...request.messages,
      { role: "assistant", content: rejected === "" ? "(no answer)" : bound(rejected, echoLimit) },
      {
        role: "user",
        content: `Your previous answer could not be used: ${first.value.failure}. ` +
          `Answer again with only the JSON value for "${request.objectName}", exactly matching the requested schema.`
      }
    ])
    const usage = addUsage(first.usage, second.usage)
    if (Result.isSuccess(second.value)) return { value: second.value.success, usage }
    return yield* new LlmError({
      reason: "invalid_output",
      message: scrub(
        `${labelOf(target.settings)} did not produce a valid ${request.objectName} after a corrective retry: ` +
          second.value.failure,
        target.settings.apiKey
      ),
      retryable: false
    })
  })

  /** One request of a few tokens, no retry, no trace row (it is about the connection, not about a bank's work). */
  const probeTarget = (target: Target, timeout: Duration.Duration): Effect.Effect<LlmProbe> =>
    Option.match(target.provider, {
      onNone: () => Effect.succeed<LlmProbe>({ status: "not_configured", latencyMs: null }),
      onSome: (provider) =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const outcome = yield* provider.model.generateText({ prompt: [{ role: "user", content: "Reply with: ok" }] })
            .pipe(
              Effect.provideService(GenerationOptions, { maxOutputTokens: 5, temperature: 0 }),
              Effect.as<LlmProbe["status"]>("connected"),
              Effect.catch((error: AiError.AiError) =>
                Effect.succeed<LlmProbe["status"]>(
                  error.reason._tag === "AuthenticationError" ? "auth_failed" : "unreachable"
                )
              ),
              Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed<LlmProbe["status"]>("timeout") }),
              Effect.catchDefect(() => Effect.succeed<LlmProbe["status"]>("unreachable"))
            )
          const ended = yield* Clock.currentTimeMillis
          return { status: outcome, latencyMs: ended - started }
        })
    })

  /** Purposes served by the same provider, endpoint, model and key share one probe. */
  const sameModel = (settings: ProviderSettings) =>
    [
      settings.provider,
      settings.baseUrl,
      settings.model,
      Option.match(settings.apiKey, {
        onNone: () => "",
        onSome: Redacted.value
      })
    ].join("\u0000")

  const probe = Effect.fn("Llm.probe")(function*(timeout: Duration.Input) {
    // Never longer than a real request may take.
    const limit = Duration.min(Duration.fromInputUnsafe(timeout), settings.timeout)
    const shared = new Map<string, Effect.Effect<LlmProbe>>()
    for (const purpose of purposes) {
      const key = sameModel(targets[purpose].settings)
      if (!shared.has(key)) shared.set(key, yield* Effect.cached(probeTarget(targets[purpose], limit)))
    }
    const results = yield* Effect.forEach(
      purposes,
      (purpose) => shared.get(sameModel(targets[purpose].settings))!,
      { concurrency: "unbounded" }
    )
    return Object.fromEntries(purposes.map((purpose, index) => [purpose, results[index]!])) as Record<
      LlmPurpose,
      LlmProbe
    >
  })

  return Llm.of({
    available: (purpose) => Option.isSome(targets[purpose].provider),
    describe: (purpose) => labelOf(targets[purpose].settings),
    generateText,
    generateObject,
    probe
  })
})

/** `Llm` for the given settings, over the app's `HttpClient`; traces go to the app's database. */
export const layerWith = (settings: LlmSettings) =>
  Layer.effect(Llm, make(settings)).pipe(Layer.provide(LlmTraceStore.layer))

/** `Llm` configured from `SERVICE_API_LLM_*` and the per-purpose overrides. */
export const layer = Layer.unwrap(Effect.map(llmSettingsFromEnv, layerWith))

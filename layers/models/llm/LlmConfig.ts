/**
 * Language-model settings: one provider for every purpose (`SERVICE_API_LLM_*`) with optional per-purpose
 * overrides (`SERVICE_API_{RETAIN,REFLECT,CONSOLIDATION}_LLM_*`), plus timeouts, retries and the structured-output
 * mode. A purpose that switches to another provider never inherits the default provider's key or base URL, so a
 * key is only ever sent to the provider it was configured for.
 */
import { Config, Duration, Effect, Option, Redacted } from "effect"
import { InvalidConfiguration } from "../../../src/config/EngramConfig.ts"
import type { LlmPurpose } from "../../../src/models/Llm.ts"

export type LlmProviderName = "none" | "openai" | "anthropic" | "gemini"
const providerNames = ["none", "openai", "anthropic", "gemini"] as const

/**
 * How structured output is requested: `json_schema` (the provider enforces the schema), `json_object` (OpenAI
 * JSON mode: valid JSON, schema given in the prompt) or `prompt` (schema in the prompt only). Whatever comes
 * back is repaired and validated anyway.
 */
export type StructuredOutputMode = "json_schema" | "json_object" | "prompt"
const structuredModes = ["json_schema", "json_object", "prompt"] as const

export interface ProviderSettings {
  readonly provider: LlmProviderName
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly model: string
  readonly structuredOutput: StructuredOutputMode
}

export interface LlmSettings {
  readonly purposes: Readonly<Record<LlmPurpose, ProviderSettings>>
  /** Limit for one request to the provider (each retry gets its own). */
  readonly timeout: Duration.Duration
  /** Retries after the first attempt, on rate limits, 5xx, timeouts and connection errors only. */
  readonly maxRetries: number
  /** First backoff delay; it doubles per retry, with ±20% jitter. */
  readonly retryBase: Duration.Duration
}

export const providerDefaults: Readonly<
  Record<Exclude<LlmProviderName, "none">, {
    readonly baseUrl: string
    readonly model: string
    readonly structuredOutput: StructuredOutputMode
  }>
> = {
  openai: { baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini", structuredOutput: "json_schema" },
  anthropic: { baseUrl: "https://api.anthropic.com/v1", model: "claude-haiku-4-5", structuredOutput: "prompt" },
  gemini: {
    baseUrl: "https://generativelanguage.googleapis.com/v1beta",
    model: "gemini-2.5-flash",
    structuredOutput: "json_schema"
  }
}

const noProvider: ProviderSettings = {
  provider: "none",
  baseUrl: "",
  apiKey: Option.none(),
  model: "",
  structuredOutput: "prompt"
}

export interface ProviderInput {
  readonly provider: LlmProviderName
  readonly baseUrl?: string | undefined
  readonly apiKey?: string | Redacted.Redacted<string> | undefined
  readonly model?: string | undefined
  readonly structuredOutput?: StructuredOutputMode | undefined
}

export const providerSettings = (input: ProviderInput): ProviderSettings => {
  if (input.provider === "none") return noProvider
  const defaults = providerDefaults[input.provider]
  const key = input.apiKey
  return {
    provider: input.provider,
    baseUrl: (input.baseUrl ?? defaults.baseUrl).replace(/\/+$/, ""),
    apiKey: key === undefined || key === "" ?
      Option.none()
      : Option.some(typeof key === "string" ? Redacted.make(key) : key),
    model: input.model ?? defaults.model,
    structuredOutput: input.structuredOutput ?? defaults.structuredOutput
  }
}

/**
 * Settings for code and tests: one provider for every purpose unless `purposes` replaces it for some.
 * Defaults: 120 s timeout, 3 retries, 500 ms backoff base.
 */
export const llmSettings = (
  input: ProviderInput & {
    readonly timeout?: Duration.Input | undefined
    readonly maxRetries?: number | undefined
    readonly retryBase?: Duration.Input | undefined
    readonly purposes?: Partial<Record<LlmPurpose, ProviderInput>> | undefined
  }
): LlmSettings => {
  const base = providerSettings(input)
  const purpose = (name: LlmPurpose) => {
    const override = input.purposes?.[name]
    return override === undefined ? base : providerSettings(override)
  }
  return {
    purposes: { retain: purpose("retain"), reflect: purpose("reflect"), consolidation: purpose("consolidation") },
    timeout: Duration.fromInputUnsafe(input.timeout ?? Duration.seconds(120)),
    maxRetries: input.maxRetries ?? 3,
    retryBase: Duration.fromInputUnsafe(input.retryBase ?? Duration.millis(500))
  }
}

const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))

const providerVariables = (prefix: string) =>
  Config.all({
    provider: optional(Config.Literals(providerNames, `${prefix}_PROVIDER`)),
    baseUrl: optional(Config.String(`${prefix}_BASE_URL`)),
    apiKey: optional(Config.Redacted(`${prefix}_API_KEY`)),
    model: optional(Config.String(`${prefix}_MODEL`))
  })

const variables = Config.all({
  base: providerVariables("SERVICE_API_LLM"),
  structuredOutput: optional(Config.Literals(structuredModes, "SERVICE_API_LLM_STRUCTURED_OUTPUT")),
  timeout: optional(Config.String("SERVICE_API_LLM_TIMEOUT")),
  maxRetries: optional(Config.Int("SERVICE_API_LLM_MAX_RETRIES")),
  retain: providerVariables("SERVICE_API_RETAIN_LLM"),
  reflect: providerVariables("SERVICE_API_REFLECT_LLM"),
  consolidation: providerVariables("SERVICE_API_CONSOLIDATION_LLM")
})

/** `120`, `90.5` (seconds) or an Effect duration such as `2 minutes` / `500 millis`. */
const parseTimeout = (raw: string | undefined) => {
  if (raw === undefined) return Option.some(Duration.seconds(120))
  const trimmed = raw.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Option.some(Duration.seconds(Number(trimmed)))
  return Option.filter(Duration.fromInput(trimmed as Duration.Input), Duration.isFinite)
}

const requiresKey = (settings: ProviderSettings) =>
  settings.provider !== "none" && Option.isNone(settings.apiKey) &&
  settings.baseUrl === providerDefaults[settings.provider].baseUrl

/** Reads the environment; a missing key for a hosted provider or a malformed value fails start-up clearly. */
export const llmSettingsFromEnv = Effect.gen(function*() {
  const env = yield* variables
  const timeout = parseTimeout(env.timeout)
  if (Option.isNone(timeout) || Duration.isZero(timeout.value)) {
    return yield* new InvalidConfiguration({
      message: "SERVICE_API_LLM_TIMEOUT must be a number of seconds or a duration such as '2 minutes'"
    })
  }
  if (env.maxRetries !== undefined && env.maxRetries < 0) {
    return yield* new InvalidConfiguration({ message: "SERVICE_API_LLM_MAX_RETRIES must be 0 or more" })
  }
  const base: ProviderInput = { ...env.base, provider: env.base.provider ?? "none" }
  const purpose = (own: typeof env.base): ProviderInput => {
    const provider = own.provider ?? base.provider
    const inherited = provider === base.provider ? base : { provider }
    return {
      provider,
      baseUrl: own.baseUrl ?? inherited.baseUrl,
      apiKey: own.apiKey ?? inherited.apiKey,
      model: own.model ?? inherited.model,
      structuredOutput: env.structuredOutput
    }
  }
  const settings = llmSettings({
    ...base,
    structuredOutput: env.structuredOutput,
    timeout: timeout.value,
    maxRetries: env.maxRetries,
    purposes: {
      retain: purpose(env.retain),
      reflect: purpose(env.reflect),
      consolidation: purpose(env.consolidation)
    }
  })
  for (const [name, value] of Object.entries(settings.purposes)) {
    if (requiresKey(value)) {
      return yield* new InvalidConfiguration({
        message: `the ${value.provider} provider for ${name} needs an API key: set SERVICE_API_LLM_API_KEY ` +
          `(or SERVICE_API_${name.toUpperCase()}_LLM_API_KEY for this purpose only)`
      })
    }
    if (value.provider !== "none" && !URL.canParse(value.baseUrl)) {
      return yield* new InvalidConfiguration({ message: `the ${name} LLM base URL is not a URL: ${value.baseUrl}` })
    }
  }
  return settings
})

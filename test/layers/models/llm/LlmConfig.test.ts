/** Language-model settings from the environment: defaults, per-purpose overrides, and start-up errors. */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"
import { llmSettingsFromEnv } from "../../../../layers/models/llm/LlmConfig.ts"

const fromEnv = (env: Record<string, string>) =>
  llmSettingsFromEnv.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

const key = (value: Option.Option<Redacted.Redacted<string>>) => Option.map(value, Redacted.value)

describe("LlmConfig", () => {
  it.effect("no provider by default", () =>
    Effect.gen(function*() {
      const settings = yield* fromEnv({})
      assert.strictEqual(settings.purposes.retain.provider, "none")
      assert.strictEqual(settings.purposes.reflect.provider, "none")
      assert.strictEqual(Duration.toSeconds(settings.timeout), 120)
      assert.strictEqual(settings.maxRetries, 3)
    }))

  it.effect("one provider serves every purpose, with its default base URL, model and structured mode", () =>
    Effect.gen(function*() {
      const settings = yield* fromEnv({ SERVICE_API_LLM_PROVIDER: "anthropic", SERVICE_API_LLM_API_KEY: "k-1" })
      for (const purpose of ["retain", "reflect", "consolidation"] as const) {
        const value = settings.purposes[purpose]
        assert.strictEqual(value.baseUrl, "https://api.anthropic.com/v1")
        assert.strictEqual(value.model, "claude-haiku-4-5")
        assert.strictEqual(value.structuredOutput, "prompt")
        assert.deepStrictEqual(key(value.apiKey), Option.some("k-1"))
      }
    }))

  it.effect("a purpose on another provider does not inherit the default key or URL", () =>
    Effect.gen(function*() {
      const settings = yield* fromEnv({
        SERVICE_API_LLM_PROVIDER: "openai",
        SERVICE_API_LLM_BASE_URL: "http://localhost:11434/v1/",
        SERVICE_API_LLM_MODEL: "qwen3:8b",
        SERVICE_API_LLM_API_KEY: "openai-key",
        SERVICE_API_REFLECT_LLM_PROVIDER: "gemini",
        SERVICE_API_REFLECT_LLM_API_KEY: "gemini-key",
        SERVICE_API_RETAIN_LLM_MODEL: "qwen3:32b",
        SERVICE_API_LLM_TIMEOUT: "2 minutes",
        SERVICE_API_LLM_MAX_RETRIES: "0"
      })
      assert.strictEqual(settings.purposes.retain.baseUrl, "http://localhost:11434/v1")
      assert.strictEqual(settings.purposes.retain.model, "qwen3:32b")
      assert.strictEqual(settings.purposes.consolidation.model, "qwen3:8b")
      assert.strictEqual(settings.purposes.reflect.provider, "gemini")
      assert.strictEqual(settings.purposes.reflect.baseUrl, "https://generativelanguage.googleapis.com/v1beta")
      assert.deepStrictEqual(key(settings.purposes.reflect.apiKey), Option.some("gemini-key"))
      assert.strictEqual(Duration.toSeconds(settings.timeout), 120)
      assert.strictEqual(settings.maxRetries, 0)
    }))

  it.effect("a local server needs no key; a hosted provider without one fails start-up", () =>
    Effect.gen(function*() {
      const local = yield* fromEnv({
        SERVICE_API_LLM_PROVIDER: "openai",
        SERVICE_API_LLM_BASE_URL: "http://127.0.0.1:8080/v1"
      })
      assert.isTrue(Option.isNone(local.purposes.retain.apiKey))
      const hosted = yield* Effect.flip(fromEnv({ SERVICE_API_LLM_PROVIDER: "openai" }))
      assert.include(hosted.message, "SERVICE_API_LLM_API_KEY")
      const switched = yield* Effect.flip(fromEnv({
        SERVICE_API_LLM_PROVIDER: "openai",
        SERVICE_API_LLM_API_KEY: "openai-key",
        SERVICE_API_CONSOLIDATION_LLM_PROVIDER: "anthropic"
      }))
      assert.include(switched.message, "SERVICE_API_CONSOLIDATION_LLM_API_KEY")
    }))

  it.effect("timeouts read as seconds or as a duration; nonsense fails start-up", () =>
    Effect.gen(function*() {
      const seconds = yield* fromEnv({ SERVICE_API_LLM_TIMEOUT: "45" })
      assert.strictEqual(Duration.toMillis(seconds.timeout), 45_000)
      const bad = yield* Effect.flip(fromEnv({ SERVICE_API_LLM_TIMEOUT: "soon" }))
      assert.include(bad.message, "SERVICE_API_LLM_TIMEOUT")
      const mode = yield* fromEnv({
        SERVICE_API_LLM_PROVIDER: "openai",
        SERVICE_API_LLM_BASE_URL: "http://127.0.0.1:1/v1",
        SERVICE_API_LLM_STRUCTURED_OUTPUT: "json_object"
      })
      assert.strictEqual(mode.purposes.reflect.structuredOutput, "json_object")
    }))
})

/** `FileConverter.layerConfig`: the environment decides the default chain, the enabled parsers and the limits. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ConfigProvider from "effect/ConfigProvider"
import { FetchHttpClient } from "effect/http"
import { FileConverter } from "../../src/files/FileConverter.ts"

const fromEnv = (env: Record<string, string>) =>
  FileConverter.layerConfig.pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )

const inspect = FileConverter.use((converter) =>
  Effect.succeed({
    enabled: converter.enabledParsers,
    defaultChain: converter.defaultChain,
    maxFileBytes: converter.maxFileBytes
  })
)

describe("FileConverter.layerConfig", () => {
  it.effect("defaults: native as the chain; native, ocr and text enabled; 50 MiB per file", () =>
    Effect.gen(function*() {
      const settings = yield* inspect.pipe(Effect.provide(fromEnv({})))
      assert.deepStrictEqual(settings, {
        enabled: ["native", "ocr", "text"],
        defaultChain: ["native"],
        maxFileBytes: 52_428_800
      })
    }))

  it.effect("SERVICE_API_FILE_PARSER is a comma-separated chain; requests may only name enabled parsers", () =>
    Effect.gen(function*() {
      const env = {
        SERVICE_API_FILE_PARSER: "text, native",
        SERVICE_API_FILE_PARSERS_ENABLED: "native,text",
        SERVICE_API_FILE_MAX_BYTES: "2048"
      }
      yield* Effect.gen(function*() {
        const converter = yield* FileConverter
        assert.deepStrictEqual(converter.defaultChain, ["text", "native"])
        assert.deepStrictEqual(converter.enabledParsers, ["native", "text"])
        assert.strictEqual(converter.maxFileBytes, 2048)
        const error = yield* Effect.flip(converter.resolveChain("ocr"))
        assert.strictEqual(error.message, "parser 'ocr' is not enabled on this server; enabled parsers: native, text")
      }).pipe(Effect.provide(fromEnv(env)))
    }))

  it.effect("a transcription base URL enables transcribe and appends it to the default chain", () =>
    Effect.gen(function*() {
      const settings = yield* inspect.pipe(Effect.provide(fromEnv({
        SERVICE_API_TRANSCRIPTION_BASE_URL: "http://127.0.0.1:9/v1",
        SERVICE_API_TRANSCRIPTION_API_KEY: "sk-secret"
      })))
      assert.deepStrictEqual(settings.enabled, ["native", "ocr", "text", "transcribe"])
      assert.deepStrictEqual(settings.defaultChain, ["native", "transcribe"])
      const blank = yield* inspect.pipe(Effect.provide(fromEnv({ SERVICE_API_TRANSCRIPTION_BASE_URL: "" })))
      assert.deepStrictEqual(blank.enabled, ["native", "ocr", "text"])
    }))

  it.effect("inconsistent settings stop start-up with a message that says what to set", () =>
    Effect.gen(function*() {
      const messages = yield* Effect.forEach([
        { SERVICE_API_FILE_PARSER: "ocr", SERVICE_API_FILE_PARSERS_ENABLED: "native" },
        { SERVICE_API_FILE_PARSERS_ENABLED: "native,pandoc" },
        { SERVICE_API_FILE_PARSERS_ENABLED: "native,transcribe" },
        { SERVICE_API_FILE_MAX_BYTES: "0" },
        { SERVICE_API_FILE_WORKERS: "-1" }
      ], (env) =>
        Effect.flip(inspect.pipe(Effect.provide(fromEnv(env)))).pipe(Effect.map((error) =>
          String((error as { message?: string }).message)
        )))
      assert.deepStrictEqual(messages, [
        "SERVICE_API_FILE_PARSER names parser(s) ocr that are not enabled (enabled: native)",
        "SERVICE_API_FILE_PARSERS_ENABLED names unknown parser(s) pandoc; known: native, ocr, transcribe, text",
        "the transcribe parser is enabled but SERVICE_API_TRANSCRIPTION_BASE_URL is not set",
        "SERVICE_API_FILE_MAX_BYTES must be a positive integer, got 0",
        "SERVICE_API_FILE_WORKERS must be 0 or more, got -1"
      ])
    }))
})

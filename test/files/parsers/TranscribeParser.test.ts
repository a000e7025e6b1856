/**
 * Audio through the `transcribe` parser against a fake OpenAI-compatible server on loopback: the multipart
 * request carries the file (named with the right extension), the model and the Bearer key; a refusal reaches the
 * caller with its status and without the key.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { FileConverter } from "../../../src/files/FileConverter.ts"
import { fakeTranscription } from "../FakeTranscription.ts"

const key = "sk-test-4f9a8b7c"

const withTranscription = (baseUrl: string) =>
  FileConverter.layer({ transcription: { baseUrl, apiKey: Redacted.make(key), model: "whisper-large-v3" } }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

/** A WAV header with a few silent samples: enough for detection, the fake server never decodes it. */
const wav = () => {
  const bytes = new Uint8Array(52)
  bytes.set(new TextEncoder().encode("RIFF"), 0)
  bytes.set(new TextEncoder().encode("WAVEfmt "), 8)
  return bytes
}

describe("transcribe", () => {
  it.live("sends the file, the model and the Bearer key as multipart and returns the transcript", () =>
    Effect.gen(function*() {
      const server = yield* fakeTranscription
      yield* Effect.gen(function*() {
        const converter = yield* FileConverter
        assert.deepStrictEqual(converter.enabledParsers, ["native", "ocr", "text", "transcribe"])
        assert.deepStrictEqual(converter.defaultChain, ["native", "transcribe"])
        const bytes = wav()
        const result = yield* converter.convert(
          { filename: "voice memo", bytes },
          yield* converter.resolveChain(undefined)
        )
        assert.deepStrictEqual(result, {
          markdown: "Meet Ravi at the harbour at noon.",
          parser: "transcribe",
          detectedType: "wav"
        })
        assert.strictEqual(server.uploads.length, 1)
        const upload = server.uploads[0]!
        assert.strictEqual(upload.path, "/v1/audio/transcriptions")
        assert.strictEqual(upload.authorization, `Bearer ${key}`)
        assert.deepStrictEqual(upload.fields, { model: "whisper-large-v3", response_format: "json" })
        assert.strictEqual(upload.file?.name, "voice_memo.wav")
        assert.strictEqual(upload.file?.type, "audio/wav")
        assert.deepStrictEqual(upload.file?.bytes, bytes)
      }).pipe(Effect.provide(withTranscription(server.baseUrl)))
    }))

  it.live("a refusal names the status and never the key, even when the server echoes it", () =>
    Effect.gen(function*() {
      const server = yield* fakeTranscription
      server.reply(401, { error: { message: `Incorrect API key provided: ${key}` } })
      yield* Effect.gen(function*() {
        const converter = yield* FileConverter
        const error = yield* Effect.flip(converter.convert({ filename: "memo.wav", bytes: wav() }, ["transcribe"]))
        assert.strictEqual(error._tag, "ConversionError")
        assert.strictEqual(
          error.message,
          "could not convert memo.wav (wav): transcribe: the transcription endpoint answered HTTP 401: Incorrect API key provided: [redacted]"
        )
        assert.notInclude(JSON.stringify(error), key)
      }).pipe(Effect.provide(withTranscription(server.baseUrl)))
    }))

  it.live("an answer without text, or an unreachable endpoint, is a failure of that parser", () =>
    Effect.gen(function*() {
      const server = yield* fakeTranscription
      server.reply(200, { transcript: "wrong field" })
      const malformed = yield* Effect.flip(
        FileConverter.use((converter) => converter.convert({ filename: "a.wav", bytes: wav() }, ["transcribe"])).pipe(
          Effect.provide(withTranscription(server.baseUrl))
        )
      )
      assert.include(malformed.message, "transcribe: the transcription endpoint answered without a `text` field")
      const unreachable = yield* Effect.flip(
        FileConverter.use((converter) => converter.convert({ filename: "a.wav", bytes: wav() }, ["transcribe"])).pipe(
          Effect.provide(withTranscription("http://127.0.0.1:9/v1"))
        )
      )
      assert.include(unreachable.message, "transcribe: the transcription endpoint could not be reached")
      assert.notInclude(unreachable.message, key)
    }))

  it.live("transcribe does not read documents, and native does not send audio anywhere", () =>
    Effect.gen(function*() {
      const server = yield* fakeTranscription
      yield* Effect.gen(function*() {
        const converter = yield* FileConverter
        const error = yield* Effect.flip(converter.convert({ filename: "memo.wav", bytes: wav() }, ["native"]))
        assert.strictEqual(
          error.message,
          "could not convert memo.wav (wav): native: does not read wav audio (the transcribe parser does)"
        )
        const text = yield* converter.convert({ filename: "notes.md", bytes: new TextEncoder().encode("# Notes") }, [
          "transcribe",
          "native"
        ])
        assert.strictEqual(text.parser, "native")
        assert.strictEqual(server.uploads.length, 0)
      }).pipe(Effect.provide(withTranscription(server.baseUrl)))
    }))
})

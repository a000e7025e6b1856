/**
 * The `transcribe` parser: audio (MP3, WAV, M4A, MP4, OGG, WebM, FLAC) to text through an OpenAI-compatible
 * `POST {baseUrl}/audio/transcriptions` (OpenAI, Groq, a local whisper.cpp or faster-whisper server). The API key
 * stays `Redacted` and is scrubbed from anything the endpoint echoes back, so it never reaches an error.
 */
import { Duration, Effect, Option, Redacted, Schema } from "effect"
import type { HttpClient } from "effect/http"
import { HttpClientRequest, HttpClientResponse } from "effect/http"
import { describeCause, type FileParser, ParserError, type SourceFile } from "../FileParser.ts"
import { audioTypes, fileTypeInfo } from "../FileType.ts"

export interface TranscriptionOptions {
  /** e.g. `https://api.openai.com/v1`; `/audio/transcriptions` is appended. */
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** Default `whisper-1`. */
  readonly model?: string | undefined
  /** Time limit for one file; default 10 minutes. */
  readonly timeout?: Duration.Input | undefined
}

const Transcription = Schema.Struct({ text: Schema.String })

/** Servers pick the decoder from the file name, so it must end in the extension of the detected format. */
const uploadName = (file: SourceFile) => {
  const { extension } = fileTypeInfo[file.type]
  const base = (file.filename.split(/[\\/]/).pop() ?? "").replace(/[^\w.-]+/g, "_") || "audio"
  return base.toLowerCase().endsWith(`.${extension}`) ? base : `${base.replace(/\.[^.]*$/, "")}.${extension}`
}

export const makeTranscribeParser = (client: HttpClient.HttpClient, options: TranscriptionOptions): FileParser => {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`
  const model = options.model ?? "whisper-1"
  const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.minutes(10))
  const scrub = (text: string) =>
    options.apiKey === undefined ? text : text.split(Redacted.value(options.apiKey)).join("[redacted]")
  const failed = (message: string) => ParserError.failed(scrub(message))

  const request = (file: SourceFile) => {
    const form = new FormData()
    form.append("file", new Blob([file.bytes.slice()], { type: fileTypeInfo[file.type].mime }), uploadName(file))
    form.append("model", model)
    form.append("response_format", "json")
    const base = HttpClientRequest.post(url).pipe(HttpClientRequest.acceptJson, HttpClientRequest.bodyFormData(form))
    return options.apiKey === undefined ? base : HttpClientRequest.bearerToken(base, options.apiKey)
  }

  const refusal = (response: HttpClientResponse.HttpClientResponse) =>
    response.text.pipe(
      Effect.orElseSucceed(() => ""),
      Effect.flatMap((body) => {
        const detail = Option.getOrElse(errorMessage(body), () => body.slice(0, 200))
        return Effect.fail(
          failed(`the transcription endpoint answered HTTP ${response.status}${detail === "" ? "" : `: ${detail}`}`)
        )
      })
    )

  const parse = (file: SourceFile) =>
    client.execute(request(file)).pipe(
      Effect.mapError((error) => failed(`the transcription endpoint could not be reached: ${describeCause(error)}`)),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300
          ? HttpClientResponse.schemaBodyJson(Transcription)(response).pipe(
            Effect.mapError(() => failed("the transcription endpoint answered without a `text` field"))
          )
          : refusal(response)
      ),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(failed(`transcription took longer than ${Duration.format(timeout)}`))
      }),
      Effect.map(({ text }) => ({ markdown: text.trim() }))
    )

  return { name: "transcribe", supports: (type) => audioTypes.has(type), parse }
}

const ErrorBody = Schema.Struct({ error: Schema.Struct({ message: Schema.String }) })

const errorMessage = (body: string) =>
  Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))(body).pipe(
    Option.map((parsed) => parsed.error.message.slice(0, 200))
  )

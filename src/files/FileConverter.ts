/**
 * Turns uploaded files into markdown for `files/retain`: resolves which parsers a request may use, detects each
 * file's type, and tries the parser chain in order until one produces text. It knows nothing of banks, documents
 * or HTTP; the endpoint maps its errors (`UnknownParser` → 400 naming the field, `FileTooLarge` → 413,
 * `DocumentRefused` → 400, and `ConversionError` → the file's failure). A zipped document (Office, OpenDocument,
 * EPUB) passes the zip-bomb checks of `ZippedDocuments` before any parser sees it.
 *
 * Parsers: `native` (built-in converter per type, offline), `ocr` (images, offline tesseract), `transcribe`
 * (audio through an OpenAI-compatible endpoint; only when configured), `text` (UTF-8 as is, refuses binary).
 */
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { HttpClient } from "effect/http"
import { type ArchiveLimits, type ArchiveRefused, checkZip } from "../archives/ZipReader.ts"
import { InvalidConfiguration } from "../config/EngramConfig.ts"
import { storableText } from "../domain/StorableText.ts"
import { describeCause, type FileParser, ParserError, type SourceFile } from "./FileParser.ts"
import { audioTypes, detectFileType, FileType, imageTypes } from "./FileType.ts"
import { makeNativeParser } from "./parsers/NativeParser.ts"
import { makeOcrEngine, type OcrOptions } from "./parsers/OcrEngine.ts"
import { makeOcrParser } from "./parsers/OcrParser.ts"
import { textParser } from "./parsers/TextParser.ts"
import { makeTranscribeParser, type TranscriptionOptions } from "./parsers/TranscribeParser.ts"
import { type DocumentWorkerOptions, makeDocumentWorkers } from "./workers/DocumentWorkers.ts"
import { defaultDocumentArchiveLimits, zippedDocumentTypes } from "./ZippedDocuments.ts"

export const ParserName = Schema.Literals(["native", "ocr", "transcribe", "text"])
export type ParserName = typeof ParserName.Type
export const parserNames: ReadonlyArray<ParserName> = ParserName.literals

export interface FileInput {
  readonly filename: string
  readonly contentType?: string | undefined
  readonly bytes: Uint8Array
}

export interface ConvertedFile {
  readonly markdown: string
  /** The parser of the chain that produced the markdown. */
  readonly parser: string
  readonly detectedType: FileType
  /** Pages of a PDF, slides of a presentation. */
  readonly pages?: number
}

/** A requested parser that does not exist or is not enabled on this server. */
export class UnknownParser extends Schema.TaggedError<UnknownParser>()("UnknownParser", {
  parser: Schema.String,
  enabled: Schema.Array(Schema.String),
  message: Schema.String
}, { httpApiStatus: 400 }) {}

export class ParserAttempt extends Schema.Class<ParserAttempt>("engram/files/ParserAttempt")({
  parser: Schema.String,
  outcome: Schema.Literals(["unsupported", "failed"]),
  message: Schema.String
}) {}

/** No parser of the chain produced text; `attempts` says what each one answered, in chain order. */
export class ConversionError extends Schema.TaggedError<ConversionError>()("ConversionError", {
  filename: Schema.String,
  detectedType: FileType,
  attempts: Schema.Array(ParserAttempt),
  message: Schema.String
}, { httpApiStatus: 422 }) {}

export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  filename: Schema.String,
  size: Schema.Number,
  maxBytes: Schema.Number,
  message: Schema.String
}, { httpApiStatus: 413 }) {}

/** A zipped document refused before parsing (a zip bomb, a damaged or hostile archive); `reason` says which check. */
export class DocumentRefused extends Schema.TaggedError<DocumentRefused>()("DocumentRefused", {
  filename: Schema.String,
  detectedType: FileType,
  reason: Schema.String,
  message: Schema.String
}, { httpApiStatus: 400 }) {}

export interface FileConverterOptions {
  /** Parsers requests may name; default `native`, `ocr`, `text`, plus `transcribe` when transcription is set. */
  readonly enabled?: ReadonlyArray<string> | undefined
  /** The chain used when a request names none; default `native`, then `transcribe` when it is enabled. */
  readonly defaultChain?: ReadonlyArray<string> | undefined
  /** Default 50 MiB. */
  readonly maxFileBytes?: number | undefined
  readonly ocr?: OcrOptions | undefined
  /** Caps a zipped document's parts must stay within; default `defaultDocumentArchiveLimits`. */
  readonly documentArchive?: ArchiveLimits | undefined
  /** Worker threads for PDF, Office and HTML conversion. */
  readonly documents?: DocumentWorkerOptions | undefined
  /** Enables the `transcribe` parser. */
  readonly transcription?: TranscriptionOptions | undefined
}

export const defaultMaxFileBytes = 50 * 1024 * 1024

const splitNames = (value: string | ReadonlyArray<string>) =>
  (typeof value === "string" ? value.split(",") : value.flatMap((name) => name.split(",")))
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "")

const dedupe = (names: ReadonlyArray<string>) => [...new Set(names)]

/** An unset and an empty variable both mean "not configured". */
const optionalString = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))

const configOptions = Config.all({
  defaultChain: optionalString("SERVICE_API_FILE_PARSER"),
  enabled: optionalString("SERVICE_API_FILE_PARSERS_ENABLED"),
  maxFileBytes: Config.Int("SERVICE_API_FILE_MAX_BYTES").pipe(Config.withDefault(defaultMaxFileBytes)),
  ocrTimeout: Config.Duration("SERVICE_API_OCR_TIMEOUT").pipe(Config.withDefault(Duration.minutes(2))),
  workers: Config.option(Config.Int("SERVICE_API_FILE_WORKERS")),
  maxInflation: Config.Number("SERVICE_API_FILE_MAX_INFLATION").pipe(
    Config.withDefault(defaultDocumentArchiveLimits.maxInflation)
  ),
  maxInflatedBytes: Config.Int("SERVICE_API_FILE_MAX_INFLATED_BYTES").pipe(
    Config.withDefault(defaultDocumentArchiveLimits.maxTotalBytes)
  ),
  parseTimeout: Config.Duration("SERVICE_API_FILE_PARSE_TIMEOUT").pipe(Config.withDefault(Duration.minutes(5))),
  transcriptionBaseUrl: optionalString("SERVICE_API_TRANSCRIPTION_BASE_URL"),
  transcriptionApiKey: Config.option(Config.Redacted("SERVICE_API_TRANSCRIPTION_API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim() !== ""))
  ),
  transcriptionModel: Config.String("SERVICE_API_TRANSCRIPTION_MODEL").pipe(Config.withDefault("whisper-1")),
  transcriptionTimeout: Config.Duration("SERVICE_API_TRANSCRIPTION_TIMEOUT").pipe(
    Config.withDefault(Duration.minutes(10))
  )
}).pipe(Config.map((settings): FileConverterOptions => ({
  defaultChain: Option.getOrUndefined(Option.map(settings.defaultChain, splitNames)),
  enabled: Option.getOrUndefined(Option.map(settings.enabled, splitNames)),
  maxFileBytes: settings.maxFileBytes,
  documentArchive: {
    ...defaultDocumentArchiveLimits,
    maxInflation: settings.maxInflation,
    maxFileBytes: settings.maxInflatedBytes,
    maxTotalBytes: settings.maxInflatedBytes
  },
  ocr: { timeout: settings.ocrTimeout },
  documents: { workers: Option.getOrUndefined(settings.workers), timeout: settings.parseTimeout },
  transcription: Option.getOrUndefined(Option.map(settings.transcriptionBaseUrl, (baseUrl) => ({
    baseUrl,
    apiKey: Option.getOrUndefined(settings.transcriptionApiKey),
    model: settings.transcriptionModel,
    timeout: settings.transcriptionTimeout
  })))
})))

export class FileConverter extends Context.Service<FileConverter, {
  readonly enabledParsers: ReadonlyArray<string>
  readonly defaultChain: ReadonlyArray<string>
  readonly maxFileBytes: number
  /** The request's parser (a name, a comma-separated list or an ordered list) or the default chain. */
  readonly resolveChain: (
    requested: string | ReadonlyArray<string> | undefined | null
  ) => Effect.Effect<ReadonlyArray<string>, UnknownParser>
  /**
   * The checks a file passes before any parser: its size and, for a zipped document, the zip-bomb checks. Answers
   * the detected type. `convert` runs it too; `files/retain` runs it in the request so a refused file is a 4xx.
   */
  readonly screen: (file: FileInput) => Effect.Effect<FileType, DocumentRefused | FileTooLarge>
  readonly convert: (
    file: FileInput,
    chain: ReadonlyArray<string>
  ) => Effect.Effect<ConvertedFile, ConversionError | DocumentRefused | FileTooLarge>
}>()("engram/files/FileConverter") {
  static readonly layer = (options: FileConverterOptions = {}) => Layer.effect(FileConverter, make(options))

  /** Reads the `SERVICE_API_FILE_*`, `SERVICE_API_OCR_*` and `SERVICE_API_TRANSCRIPTION_*` variables. */
  static readonly layerConfig = Layer.unwrap(Effect.gen(function*() {
    return FileConverter.layer(yield* configOptions)
  }))
}

const isParserName = (name: string): name is ParserName => (parserNames as ReadonlyArray<string>).includes(name)

const describeUnsupported = (parser: string, type: FileType, chain: ReadonlyArray<string>) => {
  if (type === "legacy-office") {
    return "legacy binary Office files (.doc, .xls, .ppt) are not supported; save as .docx, .xlsx or .pptx"
  }
  if (type === "zip") return "a ZIP archive that is not an Office, OpenDocument or EPUB file is not supported"
  if (type === "binary") return "unrecognised binary content"
  if (type === "tiff") return "TIFF images are not supported; convert to PNG or JPEG"
  if (audioTypes.has(type) && !chain.includes("transcribe")) {
    return `does not read ${type} audio (the transcribe parser does)`
  }
  if (imageTypes.has(type) && parser === "text") return `does not read ${type} images (native and ocr do)`
  return `does not read ${type}`
}

const make = Effect.fnUntraced(function*(options: FileConverterOptions) {
  const transcription = options.transcription
  const enabled = dedupe(
    splitNames(options.enabled ?? ["native", "ocr", "text", ...(transcription ? ["transcribe"] : [])])
  )
  const unknown = enabled.filter((name) => !isParserName(name))
  if (unknown.length > 0) {
    return yield* new InvalidConfiguration({
      message: `SERVICE_API_FILE_PARSERS_ENABLED names unknown parser(s) ${unknown.join(", ")}; known: ${
        parserNames.join(", ")
      }`
    })
  }
  if (enabled.includes("transcribe") && transcription === undefined) {
    return yield* new InvalidConfiguration({
      message: "the transcribe parser is enabled but SERVICE_API_TRANSCRIPTION_BASE_URL is not set"
    })
  }
  const defaultChain = dedupe(
    splitNames(options.defaultChain ?? ["native", ...(enabled.includes("transcribe") ? ["transcribe"] : [])])
  )
  const notEnabled = defaultChain.filter((name) => !enabled.includes(name))
  if (defaultChain.length === 0 || notEnabled.length > 0) {
    return yield* new InvalidConfiguration({
      message: defaultChain.length === 0
        ? "SERVICE_API_FILE_PARSER names no parser"
        : `SERVICE_API_FILE_PARSER names parser(s) ${notEnabled.join(", ")} that are not enabled (enabled: ${
          enabled.join(", ")
        })`
    })
  }
  const maxFileBytes = options.maxFileBytes ?? defaultMaxFileBytes
  if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) {
    return yield* new InvalidConfiguration({
      message: `SERVICE_API_FILE_MAX_BYTES must be a positive integer, got ${maxFileBytes}`
    })
  }
  const workers = options.documents?.workers
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0)) {
    return yield* new InvalidConfiguration({ message: `SERVICE_API_FILE_WORKERS must be 0 or more, got ${workers}` })
  }

  const parsers = new Map<string, FileParser>()
  if (enabled.includes("native") || enabled.includes("ocr")) {
    const ocr = yield* makeOcrEngine(options.ocr)
    if (enabled.includes("native")) {
      parsers.set("native", makeNativeParser(yield* makeDocumentWorkers(options.documents), ocr))
    }
    if (enabled.includes("ocr")) parsers.set("ocr", makeOcrParser(ocr))
  }
  if (enabled.includes("text")) parsers.set("text", textParser)
  if (transcription !== undefined && enabled.includes("transcribe")) {
    parsers.set("transcribe", makeTranscribeParser(yield* HttpClient.HttpClient, transcription))
  }

  const resolveChain = Effect.fn("FileConverter.resolveChain")(function*(
    requested: string | ReadonlyArray<string> | undefined | null
  ) {
    const names = requested === undefined || requested === null ? [] : dedupe(splitNames(requested))
    if (names.length === 0) return defaultChain
    const rejected = names.find((name) => !enabled.includes(name))
    if (rejected !== undefined) {
      const why = isParserName(rejected)
        ? `parser '${rejected}' is not enabled on this server`
        : `unknown parser '${rejected}'`
      return yield* new UnknownParser({
        parser: rejected,
        enabled,
        message: `${why}; enabled parsers: ${enabled.join(", ")}`
      })
    }
    return names
  })

  const attempt = (parser: FileParser, source: SourceFile) =>
    parser.parse(source).pipe(
      // A library bug on one file must not take the conversion down: it is that parser's failure.
      Effect.catchDefect((defect) => Effect.fail(ParserError.failed(`internal error: ${describeCause(defect)}`))),
      Effect.flatMap((parsed) =>
        parsed.markdown.trim() === "" ? Effect.fail(ParserError.failed("found no text")) : Effect.succeed(parsed)
      ),
      Effect.withSpan("FileConverter.parse", { attributes: { parser: parser.name, type: source.type } }),
      Effect.result
    )

  const documentArchive = options.documentArchive ?? defaultDocumentArchiveLimits

  const screen = Effect.fn("FileConverter.screen")(function*(file: FileInput) {
    if (file.bytes.byteLength > maxFileBytes) {
      return yield* new FileTooLarge({
        filename: file.filename,
        size: file.bytes.byteLength,
        maxBytes: maxFileBytes,
        message: `${file.filename} is ${file.bytes.byteLength} bytes; the limit is ${maxFileBytes} bytes per file`
      })
    }
    const type = detectFileType(file)
    if (zippedDocumentTypes.has(type)) {
      yield* checkZip(file.bytes, documentArchive).pipe(
        Effect.mapError((refused: ArchiveRefused) =>
          new DocumentRefused({
            filename: file.filename,
            detectedType: type,
            reason: refused.reason,
            message: `${file.filename} (${type}) refused before parsing (${refused.reason}): ${refused.message}`
          })
        )
      )
    }
    return type
  })

  const convert = Effect.fn("FileConverter.convert")(function*(file: FileInput, chain: ReadonlyArray<string>) {
    yield* Effect.annotateCurrentSpan({ filename: file.filename, size: file.bytes.byteLength })
    const type = yield* screen(file)
    yield* Effect.annotateCurrentSpan({ type })
    const source: SourceFile = { ...file, type }
    const attempts: Array<ParserAttempt> = []
    for (const name of chain) {
      const parser = parsers.get(name)
      if (parser === undefined) {
        attempts.push(new ParserAttempt({ parser: name, outcome: "unsupported", message: "is not enabled" }))
        continue
      }
      if (!parser.supports(type)) {
        attempts.push(
          new ParserAttempt({ parser: name, outcome: "unsupported", message: describeUnsupported(name, type, chain) })
        )
        continue
      }
      const outcome = yield* attempt(parser, source)
      if (Result.isSuccess(outcome)) {
        const { markdown, pages } = outcome.success
        // Text from PDFs and office files can carry NULs, which PostgreSQL cannot store.
        const converted: ConvertedFile = {
          markdown: storableText(markdown),
          parser: name,
          detectedType: type,
          ...(pages === undefined ? {} : { pages })
        }
        return converted
      }
      attempts.push(
        new ParserAttempt({ parser: name, outcome: outcome.failure.reason, message: outcome.failure.message })
      )
      yield* Effect.logDebug(`parser ${name} could not convert ${file.filename}: ${outcome.failure.message}`)
    }
    return yield* new ConversionError({
      filename: file.filename,
      detectedType: type,
      attempts,
      message: `could not convert ${file.filename} (${type}): ${
        attempts.length === 0 ? "no parser given" : attempts.map((a) => `${a.parser}: ${a.message}`).join("; ")
      }`
    })
  })

  return FileConverter.of({ enabledParsers: enabled, defaultChain, maxFileBytes, resolveChain, screen, convert })
})

/**
 * One tesseract.js worker shared by every image conversion: created on first use, reused, serialised (one image
 * at a time), and terminated when the owning scope closes. It runs fully offline: the worker script and the
 * wasm core load from `node_modules` (tesseract.js's Node worker and `tesseract.js-core`), the English LSTM model
 * from `@tesseract.js-data/eng`, and no trained data is cached to disk. Recognition runs in a worker thread, so
 * it does not block the event loop; a recognition that hits the time limit ends the worker (the next call starts
 * a fresh one).
 */
import { Duration, Effect, Option, Ref, Semaphore } from "effect"
import type { Scope } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { Worker as TesseractWorker } from "tesseract.js"
import { describeCause, ParserError } from "../FileParser.ts"

export interface OcrOptions {
  /** Folder holding `<lang>.traineddata.gz`; default: the LSTM-only model shipped in `@tesseract.js-data/eng`. */
  readonly langPath?: string | undefined
  /** Tesseract language codes joined with `+` (each needs its traineddata in `langPath`); default `eng`. */
  readonly languages?: string | undefined
  /** Time limit for one image; default 2 minutes. */
  readonly timeout?: Duration.Input | undefined
}

export interface OcrEngine {
  /** The text of an image (PNG, JPEG, GIF, BMP, WebP); blank-line separated blocks. */
  readonly recognize: (image: Uint8Array) => Effect.Effect<string, ParserError>
}

export const defaultLangPath = (): string =>
  path.join(
    path.dirname(createRequire(import.meta.url).resolve("@tesseract.js-data/eng/package.json")),
    "4.0.0_best_int"
  )

interface Live {
  readonly worker: TesseractWorker
  /** Set when the worker thread died; the next call replaces it. */
  readonly broken: { value: boolean }
}

export const makeOcrEngine = Effect.fnUntraced(
  function*(options: OcrOptions = {}): Effect.fn.Return<OcrEngine, never, Scope.Scope> {
    const langPath = options.langPath ?? defaultLangPath()
    const languages = options.languages ?? "eng"
    const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.minutes(2))
    const current = yield* Ref.make(Option.none<Live>())
    const lock = yield* Semaphore.make(1)

    const terminate = Effect.flatMap(Ref.getAndSet(current, Option.none()), (live) =>
      Option.match(live, {
        onNone: () => Effect.void,
        onSome: ({ worker }) => Effect.asVoid(Effect.promise(() => worker.terminate().catch(() => undefined)))
      }))

    yield* Effect.addFinalizer(() => terminate)

    // tesseract.js loads with the first image rather than with the server, which mostly never sees one.
    const start = Effect.tryPromise({
      try: () =>
        import("tesseract.js").then(({ createWorker, OEM }) =>
          createWorker(languages, OEM.LSTM_ONLY, {
            langPath,
            gzip: true,
            cacheMethod: "none",
            logger: () => undefined,
            // Without a handler tesseract.js rethrows a failed job inside its message listener, crashing the process;
            // the failure still reaches the job's promise.
            errorHandler: () => undefined
          })
        ),
      catch: (cause) => ParserError.failed(`the OCR engine could not start: ${describeCause(cause)}`)
    }).pipe(
      Effect.map((worker): Live => {
        const broken = { value: false }
        // A worker thread that dies emits `error`; unobserved, that would end the whole process.
        const thread = (worker as unknown as { worker?: { on?: (event: string, listener: () => void) => void } }).worker
        thread?.on?.("error", () => void (broken.value = true))
        return { worker, broken }
      })
    )

    const acquire = Effect.flatMap(Ref.get(current), (live) =>
      Option.isSome(live) && !live.value.broken.value
        ? Effect.succeed(live.value)
        : terminate.pipe(Effect.andThen(start), Effect.tap((fresh) => Ref.set(current, Option.some(fresh)))))

    const recognize = (image: Uint8Array) =>
      lock.withPermits(1)(
        Effect.flatMap(acquire, ({ worker }) =>
          Effect.tryPromise({
            try: () => worker.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength)),
            catch: (cause) => ParserError.failed(`OCR could not read the image: ${describeCause(cause)}`)
          }).pipe(
            // An abandoned recognition (time limit, interruption) keeps the worker busy: replace the worker rather
            // than queue the next image behind it.
            Effect.onInterrupt(() => terminate),
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () => Effect.fail(ParserError.failed(`OCR took longer than ${Duration.format(timeout)}`))
            })
          ))
      ).pipe(Effect.map((result) => result.data.text.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim()))

    return { recognize }
  }
)

/**
 * Limits on a `multipart/form-data` body, enforced by the parser as it reads (it stops at the first limit crossed,
 * before the rest is written to temporary files): how many parts, how large a form field (the `request` JSON) and
 * how large a file part may be, per route. Crossing one answers 413 with JSON naming the form field and the limit;
 * nothing is stored, since the handler never runs. Before, a body could carry any number of parts (each file part a
 * temporary file on disk) and fields of 10 MiB; only the whole body was capped.
 */
import { ByteSize, Cause, Config, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { EngramConfig } from "../config/EngramConfig.ts"
import { defaultMaxFileBytes } from "../files/FileConverter.ts"

interface RouteLimits {
  /** The route's file field, named in a refusal. */
  readonly fileField: string
  readonly maxFileBytes: number
  readonly maxParts: number
}

/** A file part's size counts its part headers too; this much slack keeps a file of exactly the route's cap. */
const headerSlack = 64 * 1024
/** Routes taking one file take it with a `request` field; a few parts more leave room for a client's extras. */
const singleFileParts = 8
const multipartType = /^\s*multipart\//i

export const multipartSettingsConfig = Config.all({
  /** Parts of a `files/retain` body: its files and the `request` field. */
  maxParts: Config.Int("SERVICE_API_MULTIPART_MAX_PARTS").pipe(Config.withDefault(64)),
  maxFieldBytes: Config.Int("SERVICE_API_MULTIPART_MAX_FIELD_BYTES").pipe(Config.withDefault(1024 * 1024)),
  maxUploadBytes: Config.Int("SERVICE_API_FILE_MAX_BYTES").pipe(Config.withDefault(defaultMaxFileBytes))
})

const refuse = (field: string, message: string) =>
  HttpServerResponse.jsonUnsafe({ detail: `${field}: ${message}`, errors: [{ field, location: "body", message }] }, {
    status: 413
  })

export const multipartLimitsMiddleware = (routeOf: (method: string, url: string) => string) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const settings = yield* multipartSettingsConfig
      const banks = "/v1/default/banks/{bank_id}"
      const routes = new Map<string, RouteLimits>([
        [`POST ${banks}/files/retain`, {
          fileField: "files",
          maxFileBytes: settings.maxUploadBytes,
          maxParts: settings.maxParts
        }],
        [`POST ${banks}/codebases/import/zip`, {
          fileField: "archive",
          maxFileBytes: config.codebases.maxArchiveBytes,
          maxParts: singleFileParts
        }],
        [`POST ${banks}/codebases/import/file`, {
          fileField: "file",
          maxFileBytes: config.codebases.archive.maxFileBytes,
          maxParts: singleFileParts
        }],
        [`POST ${banks}/brain/import`, {
          fileField: "file",
          maxFileBytes: config.brain.maxFileBytes,
          maxParts: singleFileParts
        }],
        [`POST ${banks}/brain/import/validate`, {
          fileField: "file",
          maxFileBytes: config.brain.maxFileBytes,
          maxParts: singleFileParts
        }]
      ])
      // A multipart body sent anywhere else is not read as files by any handler: the request cap is its only bound.
      const otherRoutes: RouteLimits = {
        fileField: "body",
        maxFileBytes: config.maxRequestBytes,
        maxParts: singleFileParts
      }
      const fieldBytes = ByteSize.bytes(settings.maxFieldBytes)

      return (httpEffect) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!multipartType.test(request.headers["content-type"] ?? "")) return yield* httpEffect
          const route = `${request.method} ${routeOf(request.method, request.url)}`
          const limits = routes.get(route) ?? otherRoutes
          const partBytes = Math.max(limits.maxFileBytes, settings.maxFieldBytes) + headerSlack
          return yield* httpEffect.pipe(
            Effect.provideService(Multipart.MaxParts, limits.maxParts),
            Effect.provideService(Multipart.MaxFieldSize, fieldBytes),
            Effect.provideService(Multipart.MaxFileSize, ByteSize.bytes(partBytes)),
            // The parser's limit errors reach here as failures or, inside the API's payload decoding, as defects.
            Effect.catchCause((cause) => {
              const error = Cause.squash(cause)
              if (!Cause.hasInterruptsOnly(cause) && Multipart.isMultipartError(error)) {
                switch (error.reason._tag) {
                  case "TooManyParts":
                    return Effect.succeed(refuse(
                      limits.fileField === "files" ? "files" : "body",
                      `more than ${limits.maxParts} parts in the multipart/form-data body` +
                        (limits.fileField === "files" ? `; send at most ${limits.maxParts - 1} files per request` : "")
                    ))
                  case "FieldTooLarge":
                    return Effect.succeed(
                      refuse("request", `a form field may hold at most ${settings.maxFieldBytes} bytes`)
                    )
                  case "FileTooLarge":
                    return Effect.succeed(
                      refuse(limits.fileField, `a file part may hold at most ${limits.maxFileBytes} bytes`)
                    )
                }
              }
              return Effect.failCause(cause)
            })
          )
        })
    }),
    { global: true }
  )

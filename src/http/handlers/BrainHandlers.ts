/**
 * REST handlers for the brain runtime: thin translations to `BrainRuntime` and `BrainLearn`. Every route answers
 * 404 naming the setting that turned it off (SERVICE_API_BRAIN_ENABLED, SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED).
 */
import { Effect, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { createReadStream } from "node:fs"
import { readFile } from "node:fs/promises"
import { BrainRuntime } from "../../brain/BrainRuntime.ts"
import { BrainLearn } from "../../learn/BrainLearn.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { NotFound, ServiceUnavailable } from "../../domain/Errors.ts"
import { makeExpirySweep } from "../../memory/forgetting/ExpirySweep.ts"
import { EngramApi } from "../api/Api.ts"

type FilePayload = Uint8Array | { readonly file: { readonly path: string } }

export const BrainHandlers = HttpApiBuilder.group(
  EngramApi,
  "brain",
  Effect.fn(function*(handlers) {
    const config = yield* EngramConfig
    const runtime = yield* BrainRuntime
    const learn = yield* BrainLearn
    const sweepExpired = yield* makeExpirySweep
    const settings = config.brain

    const disabled = (route: string, setting: string) =>
      new NotFound({ detail: `the brain route ${route} is disabled (${setting}=false)`, resource: "route", id: route })

    const runtimeOn = (route: string) =>
      settings.enabled ? Effect.void : Effect.fail(disabled(route, "SERVICE_API_BRAIN_ENABLED"))

    const filesOn = (route: string) =>
      Effect.andThen(
        runtimeOn(route),
        settings.importExportEnabled
          ? Effect.void
          : Effect.fail(disabled(route, "SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED"))
      )

    /** The file's bytes, from a raw body or the multipart field `file` (already on disk). */
    const bytesOf = (payload: FilePayload) =>
      payload instanceof Uint8Array
        ? Effect.succeed(payload)
        : Effect.tryPromise({
          try: () =>
            readFile(payload.file.path).then((buffer) =>
              new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
            ),
          catch: () => new ServiceUnavailable({ detail: "the uploaded file could not be read" })
        })

    return handlers.handleAll({
      status: ({ params }) => Effect.andThen(runtimeOn("brain/status"), runtime.status(params.bank_id)),
      export: ({ params, query }) =>
        Effect.gen(function*() {
          yield* filesOn("brain/export")
          // Reads hide an expired memory at once, but its record stays in the brain (and its row in the tables) until
          // the sweep deletes it: the file a user takes away must not carry it, so what has expired is deleted first.
          yield* sweepExpired(params.bank_id)
          const written = yield* runtime.writeFile(params.bank_id, { mode: query.mode ?? "incremental" })
          // Streamed from disk; a newer file renamed over it meanwhile is read whole either way (rename is atomic).
          return Stream.fromAsyncIterable(
            createReadStream(written.path) as AsyncIterable<Uint8Array>,
            () => new ServiceUnavailable({ detail: "the .brain file could not be read" })
          )
        }),
      validate: ({ params, payload }) =>
        Effect.gen(function*() {
          yield* filesOn("brain/import/validate")
          const bytes = yield* bytesOf(payload as FilePayload).pipe(Effect.orDie)
          return yield* runtime.validate(params.bank_id, bytes)
        }),
      import: ({ params, payload }) =>
        Effect.gen(function*() {
          yield* filesOn("brain/import")
          const bytes = yield* bytesOf(payload as FilePayload)
          return yield* runtime.importFile(params.bank_id, bytes)
        }),
      learn: ({ params, payload }) => Effect.andThen(runtimeOn("brain/learn"), learn.submit(params.bank_id, payload))
    })
  })
)

/**
 * Files the server keeps for a client to fetch later (document export archives) or for a background task to read
 * (an uploaded import archive), in the database so they survive a restart and go with their bank. A file is
 * addressed by a random key, never by a path: nothing here touches the file system, so no key can reach outside
 * the store. Reading checks nothing about access; the download route asks whether the caller reaches the bank.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { NotFound } from "../domain/Errors.ts"

export interface StoredFile {
  readonly key: string
  readonly bankId: string
  readonly filename: string
  readonly contentType: string
  readonly bytes: Uint8Array
}

export class StoredFiles extends Context.Service<StoredFiles, {
  /** Stores the bytes under a fresh unguessable key (`<purpose>-<uuid><extension>`) and returns it. */
  readonly put: (file: {
    readonly bankId: string
    readonly purpose: string
    readonly filename: string
    readonly contentType: string
    readonly extension: string
    readonly bytes: Uint8Array
  }) => Effect.Effect<string>
  readonly get: (key: string) => Effect.Effect<StoredFile, NotFound>
  readonly remove: (key: string) => Effect.Effect<void>
}>()("engram/files/StoredFiles") {
  static readonly layer = Layer.effect(
    StoredFiles,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const put = Effect.fn("StoredFiles.put")(function*(file: {
        readonly bankId: string
        readonly purpose: string
        readonly filename: string
        readonly contentType: string
        readonly extension: string
        readonly bytes: Uint8Array
      }) {
        const key = `${file.purpose}-${crypto.randomUUID()}${file.extension}`
        yield* sql`INSERT INTO stored_files ${
          sql.insert({
            key,
            bankId: file.bankId,
            purpose: file.purpose,
            filename: file.filename,
            contentType: file.contentType,
            sizeBytes: file.bytes.length,
            bytes: file.bytes
          })
        }`.pipe(Effect.orDie)
        return key
      })

      const get = Effect.fn("StoredFiles.get")(function*(key: string) {
        const rows = yield* sql<StoredFile>`
          SELECT key, bank_id, filename, content_type, bytes FROM stored_files WHERE key = ${key}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of("file", key)
        return row
      })

      const remove = (key: string) => sql`DELETE FROM stored_files WHERE key = ${key}`.pipe(Effect.orDie, Effect.asVoid)

      return StoredFiles.of({ put, get, remove })
    })
  )
}

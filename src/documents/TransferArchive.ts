/**
 * The document transfer archive: a zip of `manifest.json` and one `documents/NNNNNN.json` per document (its
 * text, chunks, extracted facts with entity names, and the causal links between them), plus `observations.json`
 * when asked for. No embeddings and no database ids: facts are referred to by their index in their document, so
 * an import re-embeds with the target bank's model and resolves entities anew. Reading refuses a hostile zip
 * (traversal, bombs) and names the first entry and field that does not fit.
 */
import { Effect, Schema } from "effect"
import { readZip } from "../archives/ZipReader.ts"
import { ValidationError } from "../domain/Errors.ts"
import { ExpiresAt } from "../domain/Memory.ts"
import { writeZip } from "../files/ZipWriter.ts"

export const archiveFormat = "engram-document-transfer"
export const archiveVersion = 1

const NullableString = Schema.NullOr(Schema.String)

export const ArchivedFact = Schema.Struct({
  text: Schema.String.check(Schema.isMinLength(1)),
  fact_type: Schema.Literals(["world", "experience"]),
  context: NullableString,
  occurred_start: NullableString,
  occurred_end: NullableString,
  mentioned_at: NullableString,
  metadata: Schema.Record(Schema.String, Schema.String),
  tags: Schema.Array(Schema.String),
  observation_scopes: Schema.optionalKey(Schema.Unknown),
  /** When the fact is forgotten; absent (archives written before expiry existed) or null: never. */
  expires_at: Schema.optionalKey(Schema.NullOr(ExpiresAt)),
  chunk_index: Schema.NullOr(Schema.Int),
  entities: Schema.Array(Schema.String)
})
export type ArchivedFact = typeof ArchivedFact.Type

export const ArchivedDocument = Schema.Struct({
  document_id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  tags: Schema.Array(Schema.String),
  context: NullableString,
  original_text: NullableString,
  created_at: NullableString,
  chunks: Schema.Array(Schema.Struct({ chunk_index: Schema.Int, text: Schema.String })),
  facts: Schema.Array(ArchivedFact),
  /** Causal links between facts of this document, by index in `facts`. */
  causal_links: Schema.Array(Schema.Struct({
    from: Schema.Int,
    to: Schema.Int,
    relation: Schema.Literals(["causes", "caused_by", "enables", "prevents"])
  }))
})
export type ArchivedDocument = typeof ArchivedDocument.Type

export const ArchivedObservation = Schema.Struct({
  text: Schema.String,
  tags: Schema.Array(Schema.String),
  /** Source facts as `[document index, fact index]`. */
  sources: Schema.Array(Schema.Tuple([Schema.Int, Schema.Int]))
})
export type ArchivedObservation = typeof ArchivedObservation.Type

const Manifest = Schema.Struct({
  format: Schema.Literal(archiveFormat),
  version: Schema.Literal(archiveVersion),
  bank_id: Schema.String,
  exported_at: Schema.String,
  documents: Schema.Int,
  include_observations: Schema.Boolean
})

export interface TransferContent {
  readonly bankId: string
  readonly exportedAt: string
  readonly documents: ReadonlyArray<ArchivedDocument>
  readonly observations: ReadonlyArray<ArchivedObservation> | null
}

const documentPath = (index: number) => `documents/${String(index + 1).padStart(6, "0")}.json`

export const encodeArchive = (content: TransferContent): Uint8Array =>
  writeZip([
    {
      name: "manifest.json",
      data: JSON.stringify(
        {
          format: archiveFormat,
          version: archiveVersion,
          bank_id: content.bankId,
          exported_at: content.exportedAt,
          documents: content.documents.length,
          include_observations: content.observations !== null
        },
        null,
        2
      )
    },
    ...content.documents.map((document, index) => ({ name: documentPath(index), data: JSON.stringify(document) })),
    ...(content.observations === null
      ? []
      : [{ name: "observations.json", data: JSON.stringify(content.observations) }])
  ])

/** Archives are JSON text: generous per-file and total caps, a ratio cap that text still passes. */
// An export is JSON, which compresses well (400× per entry allowed), but an upload is still capped like any archive.
const limits = {
  maxFiles: 200_000,
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 400,
  maxInflation: 100,
  inflationFloorBytes: 64 * 1024 * 1024
}

const refuse = (message: string) => ValidationError.single("file", message)

const parseEntry = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  path: string,
  bytes: Uint8Array
) =>
  Effect.gen(function*() {
    const json = yield* Effect.try({
      try: () => JSON.parse(new TextDecoder().decode(bytes)) as unknown,
      catch: () => refuse(`${path} is not valid JSON`)
    })
    return yield* Schema.decodeUnknownEffect(schema)(json).pipe(
      Effect.mapError((error) => refuse(`${path}: ${ValidationError.fromSchemaError(error, "body").detail}`))
    )
  })

export const decodeArchive = Effect.fn("TransferArchive.decode")(function*(bytes: Uint8Array) {
  const entries = yield* readZip(bytes, limits).pipe(Effect.mapError((refused) => refuse(refused.message)))
  const byPath = new Map(entries.map((entry) => [entry.path, entry.bytes]))
  const manifestBytes = byPath.get("manifest.json")
  if (manifestBytes === undefined) return yield* refuse("not a document transfer archive: manifest.json is missing")
  const manifest = yield* parseEntry(Manifest, "manifest.json", manifestBytes)
  const documents: Array<ArchivedDocument> = []
  for (let index = 0; index < manifest.documents; index++) {
    const path = documentPath(index)
    const entry = byPath.get(path)
    if (entry === undefined) {
      return yield* refuse(`${path} is missing (the manifest lists ${manifest.documents} documents)`)
    }
    documents.push(yield* parseEntry(ArchivedDocument, path, entry))
  }
  const observationBytes = byPath.get("observations.json")
  const observations = manifest.include_observations && observationBytes !== undefined
    ? yield* parseEntry(Schema.Array(ArchivedObservation), "observations.json", observationBytes)
    : null
  return {
    bankId: manifest.bank_id,
    exportedAt: manifest.exported_at,
    documents,
    observations
  } satisfies TransferContent
})

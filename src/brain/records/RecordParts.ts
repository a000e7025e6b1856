/**
 * A brain's memory records as flat parts for its `.brain` file, and back: numbers and vectors as typed arrays, texts
 * and the other columns as arrays in one JSON value (V8 parses a large array of strings at several hundred MB/s).
 * `recordsFromParts` checks that the parts fit together and throws a RangeError when they do not, so a file with a
 * valid checksum but inconsistent columns is refused, never installed.
 */
import { every, runWhole, type Sliced } from "../Sliced.ts"
import type { ChunkText, MemoryInput } from "./MemoryRecords.ts"
import { MemoryRecords } from "./MemoryRecords.ts"

/** The columns that are not numbers, as stored in the file's JSON section. */
export interface RecordColumns {
  readonly ids: ReadonlyArray<string>
  readonly texts: ReadonlyArray<string>
  readonly factTypes: ReadonlyArray<string>
  readonly contexts: ReadonlyArray<string | null>
  readonly documentIds: ReadonlyArray<string | null>
  readonly chunkIds: ReadonlyArray<string | null>
  readonly metadata: ReadonlyArray<Record<string, string> | null>
  readonly tags: ReadonlyArray<ReadonlyArray<string>>
  readonly sourceFactIds: ReadonlyArray<ReadonlyArray<string> | null>
  readonly supersededBy: ReadonlyArray<string | null>
  readonly entityIds: ReadonlyArray<ReadonlyArray<string>>
  readonly entityNames: ReadonlyArray<readonly [string, string]>
  readonly chunks: ReadonlyArray<readonly [string, number, string]>
}

export interface RecordParts {
  readonly dimensions: number
  readonly columns: RecordColumns
  readonly seqs: Float64Array
  /** Per memory: occurred start, occurred end, mentioned at, created at (epoch ms; NaN for null). */
  readonly times: Float64Array
  /** NaN for null. */
  readonly confidence: Float64Array
  /** Per memory its expiry (epoch ms; NaN for none); empty in a file written before memories could expire. */
  readonly expiresAt: Float64Array
  readonly vectors: Float32Array
  readonly vectorPresent: Uint8Array
}

const orNaN = (value: number | null): number => value ?? Number.NaN
const orNull = (value: number): number | null => (Number.isNaN(value) ? null : value)

export const recordsToParts = (records: MemoryRecords): RecordParts => runWhole(recordsToPartsSliced(records))

/** `recordsToParts` in slices of 2,000 memories (`Sliced.ts`): a second in one piece at 100k memories. */
export function* recordsToPartsSliced(records: MemoryRecords): Sliced<RecordParts> {
  const inputs: Array<MemoryInput> = []
  const pause = every(2_000)
  for (const input of records.inputs()) {
    inputs.push(input)
    if (pause()) yield
  }
  const n = inputs.length
  const dimensions = records.vectors.dimensions
  const seqs = new Float64Array(n)
  const times = new Float64Array(4 * n)
  const confidence = new Float64Array(n)
  const expiresAt = new Float64Array(n)
  const vectors = new Float32Array(n * dimensions)
  const vectorPresent = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const input = inputs[i]!
    if (pause()) yield
    seqs[i] = input.seq
    times.set(
      [orNaN(input.occurredStart), orNaN(input.occurredEnd), orNaN(input.mentionedAt), orNaN(input.createdAt)],
      4 * i
    )
    confidence[i] = orNaN(input.confidence)
    expiresAt[i] = orNaN(input.expiresAt)
    if (input.embedding !== null && input.embedding.length === dimensions) {
      vectors.set(input.embedding, i * dimensions)
      vectorPresent[i] = 1
    }
  }
  yield
  return {
    dimensions,
    columns: {
      ids: inputs.map((input) => input.id),
      texts: inputs.map((input) => input.text),
      factTypes: inputs.map((input) => input.factType),
      contexts: inputs.map((input) => input.context),
      documentIds: inputs.map((input) => input.documentId),
      chunkIds: inputs.map((input) => input.chunkId),
      metadata: inputs.map((input) => input.metadata),
      tags: inputs.map((input) => input.tags),
      sourceFactIds: inputs.map((input) => input.sourceFactIds),
      supersededBy: inputs.map((input) => input.supersededBy),
      entityIds: inputs.map((input) => input.entityIds),
      entityNames: records.entityNameList(),
      chunks: records.chunkList().map(([id, chunk]) => [id, chunk.chunkIndex, chunk.text] as const)
    },
    seqs,
    times,
    confidence,
    expiresAt,
    vectors,
    vectorPresent
  }
}

const isString = (value: unknown): value is string => typeof value === "string"
const isNullableString = (value: unknown) => value === null || typeof value === "string"
const isStrings = (value: unknown) => Array.isArray(value) && value.every(isString)
const isStringMap = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every(isString)

/** Items of a column checked between two points where the work may pause. */
const checksPerStep = 20_000

/**
 * Checks the JSON column section: the right shape and one entry per memory in every column. In slices: at 100k
 * memories the check walks 1.3M items and holds a set of every id.
 */
export function* checkingRecordColumns(value: unknown): Sliced<RecordColumns> {
  if (typeof value !== "object" || value === null) throw new RangeError("records: the columns are not an object")
  const c = value as Record<string, unknown>
  // Checked item by item, so the caller's element type holds for what passed.
  function* column<A>(name: string, check: (item: unknown) => boolean): Sliced<ReadonlyArray<A>> {
    const items: unknown = c[name]
    if (!Array.isArray(items)) throw new RangeError(`records: column ${name} is malformed`)
    const pause = every(checksPerStep)
    for (const item of items) {
      if (!check(item)) throw new RangeError(`records: column ${name} is malformed`)
      if (pause()) yield
    }
    return items as ReadonlyArray<A>
  }
  const columns: RecordColumns = {
    ids: yield* column("ids", isString),
    texts: yield* column("texts", isString),
    factTypes: yield* column("factTypes", isString),
    contexts: yield* column("contexts", isNullableString),
    documentIds: yield* column("documentIds", isNullableString),
    chunkIds: yield* column("chunkIds", isNullableString),
    metadata: yield* column("metadata", (item) => item === null || isStringMap(item)),
    tags: yield* column("tags", isStrings),
    sourceFactIds: yield* column("sourceFactIds", (item) => item === null || isStrings(item)),
    supersededBy: yield* column("supersededBy", isNullableString),
    entityIds: yield* column("entityIds", isStrings),
    entityNames: yield* column(
      "entityNames",
      (item) => Array.isArray(item) && item.length === 2 && item.every(isString)
    ),
    chunks: yield* column(
      "chunks",
      (item) =>
        Array.isArray(item) && item.length === 3 && isString(item[0]) && Number.isInteger(item[1]) && isString(item[2])
    )
  }
  const n = columns.ids.length
  for (
    const name of [
      "texts",
      "factTypes",
      "contexts",
      "documentIds",
      "chunkIds",
      "metadata",
      "tags",
      "sourceFactIds",
      "supersededBy",
      "entityIds"
    ] as const
  ) {
    if (columns[name].length !== n) throw new RangeError(`records: column ${name} does not have one entry per memory`)
  }
  const seen = new Set<string>()
  const pause = every(checksPerStep)
  for (const id of columns.ids) {
    seen.add(id)
    if (pause()) yield
  }
  if (seen.size !== n) throw new RangeError("records: memory ids repeat")
  return columns
}

export const recordsFromParts = (parts: RecordParts): MemoryRecords => runWhole(recordsFromPartsSliced(parts))

/**
 * Memories placed between two yields of `recordsFromPartsSliced`: 2,000 took 30-45 ms (a CPU profile of a server
 * loading 10k-memory banks' files under fifty clients), so a slice ran far past its 8 ms.
 */
const piece = 500

/** `recordsFromParts` in slices of 500 memories (`Sliced.ts`): 1.6 s in one piece at 100k memories. */
export function* recordsFromPartsSliced(parts: RecordParts): Sliced<MemoryRecords> {
  const { columns, dimensions } = parts
  const n = columns.ids.length
  if (
    parts.seqs.length !== n || parts.times.length !== 4 * n || parts.confidence.length !== n ||
    (parts.expiresAt.length !== n && parts.expiresAt.length !== 0) ||
    parts.vectorPresent.length !== n || parts.vectors.length !== n * dimensions
  ) throw new RangeError("records: the numeric parts do not have one entry per memory")
  const records = new MemoryRecords(dimensions, n)
  // An entity name or a chunk is one map entry, far cheaper than placing a memory: more of them to a slice.
  for (let start = 0; start < columns.entityNames.length; start += piece * 10) {
    records.nameEntities(columns.entityNames.slice(start, start + piece * 10))
    yield
  }
  for (let start = 0; start < columns.chunks.length; start += piece * 5) {
    records.addChunks(
      columns.chunks.slice(start, start + piece * 5).map((
        [id, chunkIndex, text]
      ): readonly [string, ChunkText] => [id, { chunkIndex, text }])
    )
    yield
  }
  let inputs: Array<MemoryInput> = []
  for (let i = 0; i < n; i++) {
    if (inputs.length === piece) {
      records.upsert(inputs)
      inputs = []
      yield
    }
    inputs.push({
      id: columns.ids[i]!,
      seq: parts.seqs[i]!,
      text: columns.texts[i]!,
      factType: columns.factTypes[i]!,
      context: columns.contexts[i]!,
      occurredStart: orNull(parts.times[4 * i]!),
      occurredEnd: orNull(parts.times[4 * i + 1]!),
      mentionedAt: orNull(parts.times[4 * i + 2]!),
      createdAt: orNull(parts.times[4 * i + 3]!),
      documentId: columns.documentIds[i]!,
      chunkId: columns.chunkIds[i]!,
      metadata: columns.metadata[i]!,
      tags: columns.tags[i]!,
      sourceFactIds: columns.sourceFactIds[i]!,
      confidence: orNull(parts.confidence[i]!),
      supersededBy: columns.supersededBy[i]!,
      expiresAt: parts.expiresAt.length === 0 ? null : orNull(parts.expiresAt[i]!),
      entityIds: columns.entityIds[i]!,
      embedding: parts.vectorPresent[i] === 1 ? parts.vectors.subarray(i * dimensions, (i + 1) * dimensions) : null
    })
  }
  records.upsert(inputs)
  return records
}

/**
 * What a `.brain` file holds and how it maps onto the container: the bank's graph snapshot and keyword index as
 * binary sections, its mental models, in `full_copy` mode a bounded copy of recent memories, the activity model's
 * bytes when there is one, all stamped with the bank's data version. `readBrainFile` parses and checks every part
 * a reader will index with (offsets, targets, positions), so a file with a valid checksum but inconsistent arrays
 * is refused, never installed. Pure: no I/O.
 */
import type { KeywordIndexParts } from "../keyword/KeywordIndex.ts"
import { linkTypes } from "../graph/GraphSnapshot.ts"
import { every, runWhole, type Sliced } from "../Sliced.ts"
import { BrainFileInvalid, encoding, type OpenedBrainFile } from "./BrainFormat.ts"
import { SectionError, SectionWriter } from "./Sections.ts"
import { checkingRecordColumns, type RecordColumns, type RecordParts } from "../records/RecordParts.ts"

/**
 * Where the bank's memories stood when the brain was taken: live memories, the highest `seq` and the last change
 * log entry applied. Equal stamps mean the brain describes the bank's current memories exactly.
 */
export interface DataVersion {
  readonly memories: number
  readonly seqMark: number
  readonly changeMark: number
}

export const dataVersionText = (version: DataVersion) => `${version.memories}.${version.seqMark}.${version.changeMark}`

export const sameDataVersion = (a: DataVersion, b: DataVersion) =>
  a.memories === b.memories && a.seqMark === b.seqMark && a.changeMark === b.changeMark

export interface GraphParts {
  readonly ids: ReadonlyArray<string>
  readonly offsets: Int32Array
  readonly targets: Int32Array
  readonly weights: Float32Array
  readonly types: Uint8Array
  /** Each id's position, when the reader already built it (checking a file's graph does). */
  readonly indexOf?: ReadonlyMap<string, number>
}

export interface BrainMentalModel {
  readonly id: string
  readonly name: string
  readonly source_query: string
  readonly content: string
  readonly tags: ReadonlyArray<string>
}

export interface BrainMemory {
  readonly id: string
  readonly text: string
  readonly fact_type: string
  readonly context: string | null
  readonly mentioned_at: string | null
  readonly occurred_start: string | null
  readonly created_at?: string | null
  readonly tags: ReadonlyArray<string>
}

export type BrainMode = "incremental" | "full_copy"

/**
 * The HNSW index kept beside the file (`HnswIndex.writeTo`): its file's name in the same directory, that file's size,
 * and for each of its labels the position of its memory in `records` (−1: a deleted point).
 */
export interface VectorIndexRef {
  readonly file: string
  readonly bytes: number
  readonly labelPositions: Int32Array
}

export interface BrainFileContent {
  readonly formatVersion: number
  readonly bankId: string
  readonly generatedAt: string
  readonly mode: BrainMode
  readonly hardwareTier: string
  readonly predictionMode: string
  readonly modelSignature: string
  readonly embeddingModel: string | null
  /** Absent in version 1 files: such a brain is never installed as it is. */
  readonly dataVersion: DataVersion | null
  readonly graph: GraphParts | null
  readonly keywords: KeywordIndexParts | null
  /** What recall reads about each memory; absent in files written before the brain held it. */
  readonly records: RecordParts | null
  readonly mentalModels: ReadonlyArray<BrainMentalModel>
  readonly memories: ReadonlyArray<BrainMemory>
  readonly activity: Uint8Array | null
  /** Absent when no index was kept with the file (a small bank, an index still building, an older file). */
  readonly vectorIndex?: VectorIndexRef | null
}

/** The manifest's description, readable without parsing the sections (validate, status). */
export interface BrainFileSummary {
  readonly formatVersion: number
  readonly bankId: string
  readonly generatedAt: string | null
  readonly mode: string
  readonly modelSignature: string | null
  readonly dataVersion: DataVersion | null
  readonly sha256: string
}

/**
 * Memory records per JSON section: a section is parsed whole, so a reader pauses between sections. 5,000 records'
 * texts and fields took 50–110 ms to parse in a `.brain` import at 100k memories (on a 2-core machine busy with
 * other requests); 1,000 keep a section within a slice. Readers take any size the manifest names.
 */
const recordsPerSection = 1_000

/** The records' text columns of memories `from` to `to`, as one section stores them. */
const columnsBetween = (columns: RecordColumns, from: number, to: number) => ({
  ids: columns.ids.slice(from, to),
  texts: columns.texts.slice(from, to),
  factTypes: columns.factTypes.slice(from, to),
  contexts: columns.contexts.slice(from, to),
  documentIds: columns.documentIds.slice(from, to),
  chunkIds: columns.chunkIds.slice(from, to),
  metadata: columns.metadata.slice(from, to),
  tags: columns.tags.slice(from, to),
  sourceFactIds: columns.sourceFactIds.slice(from, to),
  supersededBy: columns.supersededBy.slice(from, to),
  entityIds: columns.entityIds.slice(from, to)
})

/** The file for `content`; `extra` adds manifest fields (a writer's own stamps). */
export const writeBrainFile = (
  content: Omit<BrainFileContent, "formatVersion">,
  extra: Record<string, unknown> = {}
): Uint8Array => runWhole(writingBrainFile(content, extra))

/** `writeBrainFile` in slices (`Sliced.ts`): 3.5 s in one piece for a 100k-memory brain. */
export function* writingBrainFile(
  content: Omit<BrainFileContent, "formatVersion">,
  extra: Record<string, unknown> = {}
): Sliced<Uint8Array> {
  const sections = new SectionWriter()
  if (content.graph !== null) {
    sections.strings("graph.ids", content.graph.ids)
      .typed("graph.offsets", content.graph.offsets)
      .typed("graph.targets", content.graph.targets)
      .typed("graph.weights", content.graph.weights)
      .typed("graph.types", content.graph.types)
  }
  const keywords = content.keywords
  if (keywords !== null) {
    sections.strings("keywords.ids", keywords.ids)
      .typed("keywords.lengths", keywords.lengths)
      .typed("keywords.type_codes", keywords.typeCodes)
      .strings("keywords.type_names", keywords.typeNames)
      .typed("keywords.tag_set_of", keywords.tagSetOf)
      .json("keywords.tag_sets", keywords.tagSets)
      .strings("keywords.lexemes", keywords.lexemes)
      .typed("keywords.posting_offsets", keywords.postingOffsets)
      .typed("keywords.posting_positions", keywords.postingPositions)
      .typed("keywords.list_start", keywords.listStart)
      .typed("keywords.memory_lexemes", keywords.memoryLexemes)
  }
  yield
  const records = content.records
  let recordSections = 0
  let chunkSections = 0
  if (records !== null) {
    const count = records.columns.ids.length
    for (let from = 0; from < count || recordSections === 0; from += recordsPerSection) {
      sections.json(
        `records.columns.${recordSections++}`,
        columnsBetween(records.columns, from, from + recordsPerSection)
      )
      yield
    }
    sections.json("records.entity_names", records.columns.entityNames)
    for (let from = 0; from < records.columns.chunks.length || chunkSections === 0; from += recordsPerSection) {
      sections.json(`records.chunks.${chunkSections++}`, records.columns.chunks.slice(from, from + recordsPerSection))
      yield
    }
    sections.typed("records.seqs", records.seqs)
      .typed("records.times", records.times)
      .typed("records.confidence", records.confidence)
      .typed("records.expires_at", records.expiresAt)
      .typed("records.vectors", records.vectors)
      .typed("records.vector_present", records.vectorPresent)
  }
  sections.json("mental_models", content.mentalModels)
  if (content.mode === "full_copy") sections.json("memories", content.memories)
  if (content.activity !== null) sections.bytes("activity", content.activity)
  const vectorIndex = content.vectorIndex ?? null
  if (vectorIndex !== null) sections.typed("vector_index.label_positions", vectorIndex.labelPositions)
  return yield* encoding({
    ...extra,
    ...(vectorIndex === null ? {} : { vector_index: { file: vectorIndex.file, bytes: vectorIndex.bytes } }),
    format: "engram-brain",
    bank_id: content.bankId,
    generated_at: content.generatedAt,
    mode: content.mode,
    hardware_tier: content.hardwareTier,
    prediction_mode: content.predictionMode,
    model_signature: content.modelSignature,
    embedding_model: content.embeddingModel,
    data_version: content.dataVersion,
    keyword_max_seq: keywords?.maxSeq ?? 0,
    records_dimensions: records?.dimensions ?? null,
    records_sections: recordSections,
    records_chunk_sections: chunkSections,
    counts: {
      graph_nodes: content.graph?.ids.length ?? 0,
      graph_edges: content.graph?.targets.length ?? 0,
      keyword_memories: keywords?.ids.length ?? 0,
      records: records?.columns.ids.length ?? 0,
      mental_models: content.mentalModels.length,
      memories: content.mode === "full_copy" ? content.memories.length : 0
    }
  }, sections)
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null)

const dataVersionOf = (value: unknown): DataVersion | null => {
  if (typeof value !== "object" || value === null) return null
  const record = value as Record<string, unknown>
  const numbers = [record["memories"], record["seqMark"], record["changeMark"]]
  if (!numbers.every((number) => Number.isSafeInteger(number) && (number as number) >= 0)) return null
  return { memories: numbers[0] as number, seqMark: numbers[1] as number, changeMark: numbers[2] as number }
}

/** The manifest's facts; version 1 named the bank `bank` and the time `created_at`. */
export const summarize = (opened: OpenedBrainFile): BrainFileSummary => {
  const m = opened.manifest
  const bankId = text(m["bank_id"]) ?? text(m["bank"])
  if (bankId === null) {
    throw new BrainFileInvalid("invalid brain file payload: the manifest names no bank", opened.version)
  }
  return {
    formatVersion: opened.version,
    bankId,
    generatedAt: text(m["generated_at"]) ?? text(m["created_at"]),
    mode: text(m["mode"]) ?? "incremental",
    modelSignature: text(m["model_signature"]),
    dataVersion: opened.version >= 2 ? dataVersionOf(m["data_version"]) : null,
    sha256: opened.sha256
  }
}

/** Nodes or edges checked between two points where the work may pause. */
const checksPerStep = 50_000

/** Checks the graph's arrays against each other; returns each node id's position (the ids must be distinct). */
function* checkingGraph(graph: GraphParts): Sliced<ReadonlyMap<string, number>> {
  const n = graph.ids.length
  const edges = graph.targets.length
  if (graph.offsets.length !== n + 1 || graph.offsets[0] !== 0 || graph.offsets[n] !== edges) {
    throw new SectionError("graph offsets do not match its nodes and edges")
  }
  if (graph.weights.length !== edges || graph.types.length !== edges) {
    throw new SectionError("graph edge arrays differ in length")
  }
  const indexOf = new Map<string, number>()
  const nodePause = every(checksPerStep)
  for (let i = 0; i < n; i++) {
    if (graph.offsets[i + 1]! < graph.offsets[i]!) throw new SectionError("graph offsets go back")
    indexOf.set(graph.ids[i]!, i)
    if (nodePause()) yield
  }
  if (indexOf.size !== n) throw new SectionError("graph node ids repeat")
  // An edge check is a few comparisons, far less than a map entry: ten times as many to a step.
  const edgePause = every(checksPerStep * 10)
  for (let e = 0; e < edges; e++) {
    const target = graph.targets[e]!
    if (!(target >= 0 && target < n) || graph.types[e]! >= linkTypes.length || !(graph.weights[e]! > 0)) {
      throw new SectionError("a graph edge points outside the graph or has an invalid type or weight")
    }
    if (edgePause()) yield
  }
  return indexOf
}

const arrayOf = <A>(value: unknown, name: string, check: (item: Record<string, unknown>) => boolean): Array<A> => {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "object" && item !== null && check(item))) {
    throw new SectionError(`section ${name} is malformed`)
  }
  return value as Array<A>
}

const isStrings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string")

const tagSetsOf = (value: unknown): ReadonlyArray<ReadonlyArray<string>> => {
  if (!Array.isArray(value) || !value.every(isStrings)) throw new SectionError("section keywords.tag_sets is malformed")
  return value as ReadonlyArray<ReadonlyArray<string>>
}

/** The records' columns from their sections, in order, as one value for `checkingRecordColumns` to check. */
function* readColumns(s: OpenedBrainFile["sections"], sectionCount: number, chunkCount: number): Sliced<unknown> {
  const merged: Record<string, Array<unknown>> = {}
  for (let i = 0; i < sectionCount; i++) {
    const part = s.json(`records.columns.${i}`)
    if (typeof part !== "object" || part === null) throw new SectionError(`section records.columns.${i} is malformed`)
    for (const [name, values] of Object.entries(part)) {
      if (!Array.isArray(values)) throw new SectionError(`section records.columns.${i} is malformed`)
      const column = merged[name] ??= []
      for (const value of values) column.push(value)
    }
    yield
  }
  const chunks: Array<unknown> = []
  for (let i = 0; i < chunkCount; i++) {
    const part = s.json(`records.chunks.${i}`)
    if (!Array.isArray(part)) throw new SectionError(`section records.chunks.${i} is malformed`)
    for (const chunk of part) chunks.push(chunk)
    yield
  }
  return { ...merged, entityNames: s.json("records.entity_names"), chunks }
}

/** Every section parsed and checked; throws `BrainFileInvalid` with the part that is wrong. */
export const readBrainFile = (opened: OpenedBrainFile): BrainFileContent => runWhole(readingBrainFile(opened))

const vectorIndexOf = (value: unknown, s: OpenedBrainFile["sections"]): VectorIndexRef | null => {
  if (typeof value !== "object" || value === null || !s.has("vector_index.label_positions")) return null
  const { file, bytes } = value as Record<string, unknown>
  if (typeof file !== "string" || !Number.isSafeInteger(bytes)) return null
  return { file, bytes: bytes as number, labelPositions: s.i32("vector_index.label_positions") }
}

/** `readBrainFile` in slices (`Sliced.ts`). */
export function* readingBrainFile(opened: OpenedBrainFile): Sliced<BrainFileContent> {
  const summary = summarize(opened)
  const s = opened.sections
  const m = opened.manifest
  try {
    // Each large section is copied in steps, and the work yields between sections: at 100k memories the graph and
    // keyword sections alone held the event loop for ~0.3 s when read in one piece.
    let graph: GraphParts | null = null
    if (s.has("graph.ids")) {
      const ids = s.strings("graph.ids")
      yield
      const offsets = yield* s.i32Sliced("graph.offsets")
      const targets = yield* s.i32Sliced("graph.targets")
      const weights = yield* s.f32Sliced("graph.weights")
      const types = yield* s.u8Sliced("graph.types")
      const parts = { ids, offsets, targets, weights, types }
      graph = { ...parts, indexOf: yield* checkingGraph(parts) }
    }
    let keywords: KeywordIndexParts | null = null
    if (s.has("keywords.ids")) {
      const ids = s.strings("keywords.ids")
      yield
      const lengths = yield* s.i32Sliced("keywords.lengths")
      const typeCodes = yield* s.u8Sliced("keywords.type_codes")
      const typeNames = s.strings("keywords.type_names")
      const tagSetOf = yield* s.i32Sliced("keywords.tag_set_of")
      const tagSets = tagSetsOf(s.json("keywords.tag_sets"))
      yield
      const lexemes = s.strings("keywords.lexemes")
      yield
      keywords = {
        ids,
        lengths,
        typeCodes,
        typeNames,
        tagSetOf,
        tagSets,
        lexemes,
        postingOffsets: yield* s.i32Sliced("keywords.posting_offsets"),
        postingPositions: yield* s.i32Sliced("keywords.posting_positions"),
        listStart: yield* s.i32Sliced("keywords.list_start"),
        memoryLexemes: yield* s.i32Sliced("keywords.memory_lexemes"),
        maxSeq: typeof m["keyword_max_seq"] === "number" ? m["keyword_max_seq"] : 0
      }
    }
    yield
    const dimensions = m["records_dimensions"]
    const sectionCount = m["records_sections"]
    const chunkCount = m["records_chunk_sections"]
    const hasRecords = s.has("records.columns.0") && Number.isSafeInteger(dimensions) && (dimensions as number) >= 0 &&
      Number.isSafeInteger(sectionCount) && Number.isSafeInteger(chunkCount)
    const records: RecordParts | null = hasRecords
      ? {
        dimensions: dimensions as number,
        columns: yield* checkingRecordColumns(yield* readColumns(s, sectionCount as number, chunkCount as number)),
        seqs: yield* s.f64Sliced("records.seqs"),
        times: yield* s.f64Sliced("records.times"),
        confidence: yield* s.f64Sliced("records.confidence"),
        // Absent from files written before memories could expire: none of theirs does.
        expiresAt: s.has("records.expires_at") ? yield* s.f64Sliced("records.expires_at") : new Float64Array(0),
        vectors: yield* s.f32Sliced("records.vectors"),
        vectorPresent: yield* s.u8Sliced("records.vector_present")
      }
      : null
    yield
    const mentalModels = s.has("mental_models")
      ? arrayOf<BrainMentalModel>(
        s.json("mental_models"),
        "mental_models",
        (item) =>
          typeof item["id"] === "string" && typeof item["name"] === "string" &&
          typeof item["source_query"] === "string" &&
          typeof item["content"] === "string" && isStrings(item["tags"])
      )
      : []
    const memories = s.has("memories")
      ? arrayOf<BrainMemory>(
        s.json("memories"),
        "memories",
        (item) =>
          typeof item["id"] === "string" && typeof item["text"] === "string" && typeof item["fact_type"] === "string" &&
          isStrings(item["tags"])
      )
      : []
    return {
      formatVersion: opened.version,
      bankId: summary.bankId,
      generatedAt: summary.generatedAt ?? "",
      mode: summary.mode === "full_copy" ? "full_copy" : "incremental",
      hardwareTier: text(m["hardware_tier"]) ?? "balanced",
      predictionMode: text(m["prediction_mode"]) ?? "histogram",
      modelSignature: summary.modelSignature ?? "",
      embeddingModel: text(m["embedding_model"]),
      dataVersion: summary.dataVersion,
      graph,
      keywords,
      records,
      mentalModels,
      memories,
      activity: s.has("activity") ? s.bytes("activity") : null,
      vectorIndex: vectorIndexOf(m["vector_index"], s)
    }
  } catch (error) {
    if (error instanceof BrainFileInvalid) throw error
    throw new BrainFileInvalid(`invalid brain file payload: ${(error as Error).message}`, opened.version)
  }
}

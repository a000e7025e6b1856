/**
 * The brain runtime of each bank: its `.brain` file under the cache directory (written atomically from the bank's
 * in-memory brain, mental models and, in `full_copy` mode, recent memories), export, validation and import of such
 * files, and the status the brain routes report. An import whose data version still matches the bank's installs
 * its graph and keyword index in `BankBrains` as they are. PostgreSQL stays the truth: nothing here is needed for
 * recall to answer, and a failure here never blocks a memory operation.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { mkdir, readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { BankBrains, type KeptBrain } from "./BankBrains.ts"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { BrainRuntimeStatusResponse } from "../domain/Brain.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { GraphSnapshot } from "./graph/GraphSnapshot.ts"
import { KeywordIndex } from "./keyword/KeywordIndex.ts"
import { recordsFromPartsSliced, recordsToPartsSliced } from "./records/RecordParts.ts"
import { runSlicedOrFail, runWhole, type Sliced } from "./Sliced.ts"
import { modelKey } from "../memory/Reembedding.ts"
import { MentalModels } from "../mentalmodels/MentalModels.ts"
import { Embeddings } from "../models/Embeddings.ts"
import { encodeActivitySection } from "../activity/ActivityExchange.ts"
import { ActivityModels } from "../activity/ActivityModels.ts"
import { tierBudgets } from "./BrainSettings.ts"
import { removeStaleTemporaries, writeAtomically } from "./file/AtomicFile.ts"
import {
  type BrainFileContent,
  type BrainMemory,
  type BrainMode,
  dataVersionText,
  readingBrainFile,
  sameDataVersion,
  summarize,
  writingBrainFile
} from "./file/BrainFile.ts"
import { BrainFileInvalid, currentVersion, type OpenedBrainFile, opening } from "./file/BrainFormat.ts"
import {
  keptIndexPresent,
  newIndexFileName,
  readKeptIndex,
  removeIndexFiles,
  removeQuietly,
  sealedIndex
} from "./file/KeptVectorIndex.ts"
import type { HnswIndex } from "./vectors/HnswIndex.ts"

/** A recent memory as the SQL client reads it (column names camel-cased). */
interface BrainMemoryRow {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly context: string | null
  readonly mentionedAt: string | null
  readonly occurredStart: string | null
  readonly createdAt: string | null
  readonly tags: ReadonlyArray<string> | null
}

export interface WrittenBrainFile {
  readonly path: string
  readonly sizeBytes: number
  readonly reused: boolean
}

export interface Validation {
  readonly valid: boolean
  readonly version: number | null
  readonly reason: string | null
}

interface FileCounters {
  fileWrites: number
  importsAccepted: number
  importsRefused: number
}

/**
 * A parsed file as a brain `BankBrains` can hold, or why it cannot be one: it must carry a keyword index and a data
 * version (format 2) and have been written for the models this service runs.
 */
export const brainOfFile = (
  content: BrainFileContent,
  modelSignature: string
): KeptBrain | { readonly reason: string } => runWhole(brainOfFileSliced(content, modelSignature))

/** `brainOfFile` in slices (`Sliced.ts`): the records of a 100k-memory file take 1.6 s to unpack. */
export function* brainOfFileSliced(
  content: BrainFileContent,
  modelSignature: string
): Sliced<KeptBrain | { readonly reason: string }> {
  if (content.dataVersion === null || content.graph === null || content.keywords === null || content.records === null) {
    return {
      reason: `this version ${content.formatVersion} file carries no keyword index, memory records or data version; ` +
        "the brain is built from the database on the next recall"
    }
  }
  if (content.modelSignature !== modelSignature) {
    return { reason: `the file was written for ${content.modelSignature}, this service runs ${modelSignature}` }
  }
  let graph: GraphSnapshot
  try {
    const { indexOf, ...adjacency } = content.graph
    graph = GraphSnapshot.fromAdjacency(
      adjacency.ids,
      adjacency,
      0,
      indexOf === undefined ? undefined : { indexOf, droppedLinks: 0 }
    )
  } catch {
    return { reason: "the graph in the file is inconsistent" }
  }
  yield
  let keywords: KeywordIndex
  try {
    keywords = yield* KeywordIndex.fromPartsSliced(content.keywords)
  } catch {
    return { reason: "the keyword index in the file is inconsistent" }
  }
  yield
  try {
    const records = yield* recordsFromPartsSliced(content.records)
    if (records.size !== keywords.size) {
      return { reason: "the memory records in the file do not match its keyword index" }
    }
    return { graph, keywords, records, dataVersion: content.dataVersion }
  } catch {
    return { reason: "the memory records in the file are inconsistent" }
  }
}

export class BrainRuntime extends Context.Service<BrainRuntime, {
  readonly filePath: (bankId: string) => string
  /** What a file must have been written for to be installed: format version, embedding model, prediction mode. */
  readonly modelSignature: string
  /**
   * Brings the bank's `.brain` file up to date and returns where it is: the file already there is kept when it
   * describes the bank as it is now (same data version, mental models and mode), so an export of an unchanged bank
   * returns the same bytes. `activity` replaces the activity section's bytes (otherwise it is the bank's own activity
   * model, see ActivityExchange).
   */
  readonly writeFile: (
    bankId: string,
    options: { readonly mode: BrainMode; readonly activity?: Uint8Array | undefined }
  ) => Effect.Effect<WrittenBrainFile, NotFound | ServiceUnavailable | ValidationError>
  /** The bank's current `.brain` file parsed, or none when there is no valid one. */
  readonly readFile: (bankId: string) => Effect.Effect<Option.Option<BrainFileContent>>
  /** The HNSW index kept with the bank's `.brain` file (`content`, read by `readFile`), when it is there and fits. */
  readonly keptIndex: (bankId: string, content: BrainFileContent) => Effect.Effect<Option.Option<HnswIndex>>
  /** Removes the bank's `.brain` file and the index kept with it. */
  readonly removeFile: (bankId: string) => Effect.Effect<void>
  /** Checks a file for a bank without changing anything. */
  readonly validate: (bankId: string, bytes: Uint8Array) => Effect.Effect<Validation>
  /** A file from anywhere (learning reads a remote's): checked and parsed, the bank not compared. */
  readonly parse: (bytes: Uint8Array) => Effect.Effect<BrainFileContent, BrainFileInvalid>
  readonly importFile: (bankId: string, bytes: Uint8Array) => Effect.Effect<{
    readonly bank_id: string
    readonly file_path: string
    readonly size_bytes: number
    readonly format_version: string | null
    readonly installed: boolean
    readonly install_reason: string | null
  }, NotFound | ValidationError | ServiceUnavailable>
  readonly status: (bankId: string) => Effect.Effect<typeof BrainRuntimeStatusResponse.Type, NotFound>
}>()("engram/brain/BrainRuntime") {
  static readonly layer = Layer.effect(
    BrainRuntime,
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const sql = yield* SqlClient.SqlClient
      const brains = yield* BankBrains
      const banks = yield* Banks
      const mentalModels = yield* MentalModels
      const embeddings = yield* Embeddings
      const activityModels = yield* ActivityModels
      const settings = config.brain
      const cacheDir = Option.getOrElse(settings.cacheDir, () => join(config.dataDir, "brain"))
      const budget = tierBudgets[settings.hardwareTier]
      const embeddingModel = modelKey(embeddings.identity)
      const modelSignature = `engram-brain-v${currentVersion}/${embeddingModel}/${settings.predictionMode}`
      const counters = new Map<string, FileCounters>()
      const countersOf = (bankId: string) => {
        let found = counters.get(bankId)
        if (found === undefined) counters.set(bankId, found = { fileWrites: 0, importsAccepted: 0, importsRefused: 0 })
        return found
      }

      const fileName = (bankId: string) => `${encodeURIComponent(bankId)}.brain`
      const filePath = (bankId: string) => join(cacheDir, fileName(bankId))

      // Responses name the file, never where the server keeps it: the absolute path (and the file system's words,
      // which carry it) go to the log only.
      const unwritable = (error: Error) =>
        Effect.andThen(
          Effect.logWarning("could not write a .brain file", { reason: error.message }),
          Effect.fail(
            new ServiceUnavailable({ detail: "the .brain file could not be written (the server log has the reason)" })
          )
        )

      // Temporaries of file writes a stop or a kill cut short. An hour old at least: the directory may be shared by
      // nodes of a cluster, and a younger one can be another node's write in progress.
      yield* removeStaleTemporaries(cacheDir, 60 * 60_000).pipe(
        Effect.tap((removed) =>
          removed > 0
            ? Effect.logInfo("removed unfinished brain file writes", { directory: cacheDir, removed })
            : Effect.void
        ),
        Effect.forkScoped
      )

      const readBytes = (path: string) =>
        Effect.promise(() =>
          readFile(path).then(
            (buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
            () => undefined
          )
        )

      /** What the mental models look like now: a file taken before a model changed is not reused. */
      const mentalModelsVersion = (bankId: string) =>
        sql<{ stamp: string }>`SELECT count(*)::text || '@' || coalesce(max(updated_at), 'epoch')::text AS stamp
          FROM mental_models WHERE bank_id = ${bankId}`.pipe(
          Effect.map((rows) => rows[0]?.stamp ?? "0"),
          Effect.orDie
        )

      const recentMemories = (bankId: string) =>
        sql<BrainMemoryRow>`
          SELECT id, text, fact_type, context, to_json(mentioned_at) #>> '{}' AS mentioned_at,
            to_json(occurred_start) #>> '{}' AS occurred_start, to_json(created_at) #>> '{}' AS created_at, tags
          FROM memory_units WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience')
          ORDER BY coalesce(mentioned_at, created_at) DESC, seq DESC
          LIMIT ${budget.memories}`.pipe(
          // Column names are camel-cased by the client; the file keeps the API's snake_case.
          Effect.map((rows) =>
            rows.map((row): BrainMemory => ({
              id: row.id,
              text: row.text,
              fact_type: row.factType,
              context: row.context ?? null,
              mentioned_at: row.mentionedAt ?? null,
              occurred_start: row.occurredStart ?? null,
              created_at: row.createdAt ?? null,
              tags: row.tags ?? []
            }))
          ),
          Effect.orDie
        )

      /** Checks and parses in slices with a turn of the event loop between them: a 100k file is 160 MB. */
      const sliced = <A>(work: Sliced<A>) =>
        runSlicedOrFail(
          work,
          Effect.yieldNow,
          (thrown) => thrown instanceof BrainFileInvalid ? thrown : new BrainFileInvalid(String(thrown), null)
        )

      const parse = (bytes: Uint8Array) =>
        sliced((function*() {
          return yield* readingBrainFile(yield* opening(bytes, settings.maxFileBytes))
        })())

      /** The bank's file checked (size, header, checksums), or none when there is no valid one. */
      const openCurrent = (bankId: string) =>
        Effect.gen(function*() {
          const bytes = yield* readBytes(filePath(bankId))
          if (bytes === undefined) return Option.none<OpenedBrainFile>()
          return yield* sliced(opening(bytes, settings.maxFileBytes)).pipe(Effect.option)
        })

      const readCurrent = (bankId: string) =>
        Effect.flatMap(openCurrent(bankId), (opened) =>
          Option.isNone(opened)
            ? Effect.succeedNone
            : sliced(readingBrainFile(opened.value)).pipe(Effect.option))

      const writeFile = Effect.fn("BrainRuntime.writeFile")(function*(
        bankId: string,
        options: { readonly mode: BrainMode; readonly activity?: Uint8Array | undefined }
      ) {
        yield* banks.get(bankId)
        const path = filePath(bankId)
        const existing = yield* openCurrent(bankId)
        const summary = Option.isSome(existing)
          ? yield* Effect.option(Effect.try(() => summarize(existing.value)))
          : Option.none()
        const modelsStamp = yield* mentalModelsVersion(bankId)
        const bankVersion = yield* brains.dataVersion(bankId)
        // A file written while the HNSW index was still building is written again once it is complete.
        const indexLacking = (yield* brains.state(bankId)).vectorIndex === "ready" &&
          !(Option.isSome(existing) &&
            (yield* keptIndexPresent(cacheDir, bankId, existing.value.manifest["vector_index"])))
        // The bank's own activity model (built first when it has none); a file with other activity is not reused.
        const activity = options.activity ??
          encodeActivitySection(yield* activityModels.own(bankId), settings.predictionMode)
        const existingActivity = Option.isSome(existing) && existing.value.sections.has("activity")
          ? yield* Effect.orElseSucceed(Effect.try(() => existing.value.sections.bytes("activity")), () => null)
          : null
        if (
          existingActivity !== null && Buffer.from(existingActivity).equals(activity) &&
          Option.isSome(existing) && Option.isSome(summary) &&
          summary.value.bankId === bankId && summary.value.formatVersion === currentVersion &&
          summary.value.mode === options.mode && summary.value.modelSignature === modelSignature &&
          summary.value.dataVersion !== null && sameDataVersion(summary.value.dataVersion, bankVersion) &&
          existing.value.manifest["mental_models_version"] === modelsStamp && !indexLacking
        ) {
          yield* brains.fileWritten(bankId, bankVersion)
          const size = yield* Effect.promise(() => stat(path).then((found) => found.size))
          return { path, sizeBytes: size, reused: true } satisfies WrittenBrainFile
        }
        // The index is written into the directory before the file: a directory that cannot be made is reported by
        // the file's own write below (a 503 that does not name it), not here.
        yield* Effect.ignore(Effect.tryPromise(() => mkdir(cacheDir, { recursive: true })))
        const indexName = newIndexFileName(bankId)
        const snapshot = yield* brains.snapshot(bankId, { indexFile: join(cacheDir, indexName) })
        // Whatever stops this write from here on, the index it wrote goes with it.
        yield* Effect.addFinalizer((exit) =>
          exit._tag === "Success" ? Effect.void : removeQuietly(join(cacheDir, indexName))
        )
        if (Option.isNone(snapshot)) {
          return yield* new ServiceUnavailable({
            detail: `the brain of bank '${bankId}' cannot be built now (its circuit breaker is open); try again later`
          })
        }
        const models = yield* mentalModels.list(bankId, {
          tags: [],
          tagsMatch: "any",
          limit: budget.mentalModels,
          offset: 0
        })
        const memories = options.mode === "full_copy" ? yield* recentMemories(bankId) : []
        const graph = snapshot.value.graph
        const records = yield* sliced(recordsToPartsSliced(snapshot.value.records)).pipe(Effect.orDie)
        const keptIndex = snapshot.value.vectorIndex
        const vectorIndex = keptIndex === undefined ? null : yield* sealedIndex(
          cacheDir,
          indexName,
          keptIndex.labelPositions
        ).pipe(
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`could not keep the vector index of bank ${bankId}`, { reason: error }), null)
          )
        )
        const bytes = yield* sliced(writingBrainFile({
          bankId,
          generatedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
          mode: options.mode,
          hardwareTier: settings.hardwareTier,
          predictionMode: settings.predictionMode,
          modelSignature,
          embeddingModel,
          dataVersion: snapshot.value.dataVersion,
          graph: {
            ids: graph.ids,
            offsets: graph.offsets,
            targets: graph.targets,
            weights: graph.weights,
            types: graph.types
          },
          keywords: snapshot.value.keywords,
          records,
          mentalModels: models.map((model) => ({
            id: model.id,
            name: model.name,
            source_query: model.source_query,
            content: model.content,
            tags: model.tags
          })),
          memories,
          activity,
          vectorIndex
        }, { mental_models_version: modelsStamp })).pipe(Effect.orDie)
        if (bytes.length > settings.maxFileBytes) {
          return yield* ValidationError.single(
            "bank_id",
            `the brain of bank '${bankId}' takes ${bytes.length} bytes, more than SERVICE_API_BRAIN_MAX_FILE_BYTES (${settings.maxFileBytes})`,
            "path"
          )
        }
        yield* writeAtomically(path, bytes).pipe(
          Effect.catch(unwritable)
        )
        yield* removeIndexFiles(cacheDir, bankId, vectorIndex === null ? undefined : indexName)
        countersOf(bankId).fileWrites++
        yield* brains.fileWritten(bankId, snapshot.value.dataVersion)
        return { path, sizeBytes: bytes.length, reused: false } satisfies WrittenBrainFile
      }, Effect.scoped)

      /** The file checked and parsed once (checksums, sections, bank): the verdict and, when valid, its content. */
      const check = (bankId: string, bytes: Uint8Array) =>
        runSlicedOrFail(
          (function*(): Sliced<{ readonly verdict: Validation; readonly content?: BrainFileContent }> {
            const opened = yield* opening(bytes, settings.maxFileBytes)
            const summary = summarize(opened)
            if (summary.bankId !== bankId) {
              return {
                verdict: {
                  valid: false,
                  version: opened.version,
                  reason: `brain file bank mismatch: the file is of bank '${summary.bankId}', not '${bankId}'`
                }
              }
            }
            return {
              verdict: { valid: true, version: opened.version, reason: null },
              content: yield* readingBrainFile(opened)
            }
          })(),
          Effect.yieldNow,
          (error) => error
        ).pipe(
          Effect.catch((error) =>
            Effect.succeed<{ readonly verdict: Validation; readonly content?: BrainFileContent }>(
              error instanceof BrainFileInvalid
                ? { verdict: { valid: false, version: error.version, reason: error.reason } }
                : {
                  verdict: { valid: false, version: null, reason: `invalid brain file: ${(error as Error).message}` }
                }
            )
          )
        )

      const importFile = Effect.fn("BrainRuntime.importFile")(function*(bankId: string, bytes: Uint8Array) {
        yield* banks.get(bankId)
        const { verdict, content } = yield* check(bankId, bytes)
        if (content === undefined) {
          countersOf(bankId).importsRefused++
          return yield* ValidationError.single("file", verdict.reason ?? "invalid brain file")
        }
        const path = filePath(bankId)
        yield* writeAtomically(path, bytes).pipe(
          Effect.catch(unwritable)
        )
        countersOf(bankId).importsAccepted++
        const outcome = yield* install(bankId, content)
        return {
          bank_id: bankId,
          file_path: fileName(bankId),
          size_bytes: bytes.length,
          format_version: String(content.formatVersion),
          installed: outcome.installed,
          install_reason: outcome.installed ? null : outcome.reason
        }
      })

      const install = (bankId: string, content: BrainFileContent) =>
        Effect.gen(function*() {
          const brain = yield* runSlicedOrFail(brainOfFileSliced(content, modelSignature), Effect.yieldNow, (thrown) =>
            thrown)
            .pipe(Effect.orDie)
          return "reason" in brain
            ? { installed: false as const, reason: brain.reason }
            : yield* brains.install(bankId, brain)
        })

      const status = Effect.fn("BrainRuntime.status")(function*(bankId: string) {
        yield* banks.get(bankId)
        const path = filePath(bankId)
        const found = yield* Effect.promise(() => stat(path).then((info) => info, () => undefined))
        const runtime = yield* brains.state(bankId)
        let summary: ReturnType<typeof summarize> | undefined
        let compatibility: string | null = null
        if (found === undefined) {
          compatibility = "no .brain file has been written for this bank yet"
        } else {
          const bytes = yield* readBytes(path)
          const opened = yield* sliced(opening(bytes ?? new Uint8Array(), settings.maxFileBytes)).pipe(
            Effect.map((file) => ({ file })),
            Effect.catch((invalid) => Effect.succeed({ invalid }))
          )
          try {
            if ("invalid" in opened) throw opened.invalid
            summary = summarize(opened.file)
          } catch (error) {
            compatibility = error instanceof BrainFileInvalid ? error.reason : String(error)
          }
          if (summary !== undefined) {
            const bankVersion = yield* brains.dataVersion(bankId)
            compatibility = summary.bankId !== bankId
              ? `the file is of bank '${summary.bankId}'`
              : summary.dataVersion === null
              ? `a version ${summary.formatVersion} file carries no data version`
              : summary.modelSignature !== modelSignature
              ? `the file was written for ${summary.modelSignature}, this service runs ${modelSignature}`
              : !sameDataVersion(summary.dataVersion, bankVersion)
              ? `the bank's data version moved since the file was written (file ${
                dataVersionText(summary.dataVersion)
              }, bank ${dataVersionText(bankVersion)})`
              : null
          }
        }
        const { stats } = runtime
        const files = countersOf(bankId)
        return {
          // Literal-typed for the response schema.
          circuit_state: runtime.breaker,
          enabled: settings.enabled && runtime.breaker !== "open",
          circuit_open: runtime.breaker !== "closed",
          failure_count: runtime.failureCount,
          bank_id: bankId,
          file_path: fileName(bankId),
          exists: found !== undefined,
          size_bytes: found?.size ?? 0,
          last_modified_at: found === undefined ? null : found.mtime.toISOString(),
          source_snapshot_id: summary?.dataVersion ? dataVersionText(summary.dataVersion) : null,
          generated_at: summary?.generatedAt ?? null,
          native_library_loaded: false,
          format_version: summary === undefined ? null : String(summary.formatVersion),
          model_signature: summary?.modelSignature ?? modelSignature,
          compatibility_reason: compatibility,
          metrics: {
            builds: stats.builds,
            build_failures: stats.buildFailures,
            incremental_updates: stats.incrementalUpdates,
            compactions: stats.compactions,
            imports_installed: stats.imports,
            file_loads: stats.fileLoads,
            vector_index: runtime.vectorIndex,
            vector_index_builds: stats.indexBuilds,
            vector_index_loads: stats.indexLoads,
            vector_index_worker_builds: stats.indexWorkerBuilds,
            vector_index_points_added_inline: stats.indexPointsAddedInline,
            reads: stats.reads,
            cold_reads: stats.coldReads,
            sql_fallbacks: stats.sqlFallbacks,
            hit_rate: stats.reads === 0 ? null : Number((1 - stats.coldReads / stats.reads).toFixed(4)),
            last_build_ms: stats.lastBuildMillis === null ? null : Number(stats.lastBuildMillis.toFixed(2)),
            last_built_at: stats.lastBuiltAt === null ? null : new Date(stats.lastBuiltAt).toISOString(),
            brain_loaded: runtime.loaded,
            brain_bytes: runtime.bytes,
            brain_data_version: runtime.dataVersion === null ? null : dataVersionText(runtime.dataVersion),
            file_writes: files.fileWrites,
            imports_accepted: files.importsAccepted,
            imports_refused: files.importsRefused,
            hardware_tier: settings.hardwareTier,
            prediction_mode: settings.predictionMode
          }
        }
      })

      return BrainRuntime.of({
        filePath,
        modelSignature,
        writeFile,
        readFile: readCurrent,
        keptIndex: (bankId, content) =>
          content.vectorIndex == null || content.records === null
            ? Effect.succeedNone
            : readKeptIndex(
              cacheDir,
              bankId,
              content.vectorIndex,
              content.records.columns.ids,
              content.records.dimensions
            ),
        removeFile: (bankId) => Effect.andThen(removeQuietly(filePath(bankId)), removeIndexFiles(cacheDir, bankId)),
        validate: (bankId, bytes) => Effect.map(check(bankId, bytes), (checked) => checked.verdict),
        parse,
        importFile,
        status
      })
    })
  )
}

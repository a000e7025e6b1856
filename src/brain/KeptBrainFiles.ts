/**
 * Big banks keep their brain in their `.brain` file, so that a restart, a brain released while idle, or a shard
 * moved to another node (with a shared `SERVICE_API_BRAIN_CACHE_DIR`) loads it and catches up from the tables
 * instead of building it again: at 100k memories a build reads 2.7M links (6–17 s on PGlite).
 *
 * The file is written when an idle brain is released, when the log kept for it grows long, and for every loaded
 * brain whose file is behind when the service stops (bounded by `stopBudget`) — not right after a build, while the
 * brain is in use: that raised a 100k server's resident memory by about 110 MB for good. Only banks of at least
 * `SERVICE_API_BRAIN_KEEP_FILES_MIN_MEMORIES` memories: a small bank builds faster than its file is read. A complete
 * HNSW index is kept beside the file (`file/KeptVectorIndex.ts`) and read back with it, so a start does not spend a
 * core for most of a minute building a 100k bank's index again.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { existsSync } from "node:fs"
import { BankBrains, type KeptBrain } from "./BankBrains.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { brainOfFileSliced, BrainRuntime } from "./BrainRuntime.ts"
import { runSliced, runSlicedOrFail } from "./Sliced.ts"

/** How long a stopping service spends writing files, all banks together. */
const stopBudget = Duration.seconds(15)

export const KeptBrainFiles = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* EngramConfig
  const settings = config.brain
  const brains = yield* BankBrains
  const runtime = yield* BrainRuntime

  // After a deletion, a file that exists is written again or removed, whether or not files are kept now: one
  // written while they were still holds the deleted memories.
  yield* brains.attachKeptFileUpdate((bankId, how) =>
    Effect.gen(function*() {
      // A drop removes whatever is there (an index file a crash left without its `.brain` file too).
      if (how === "drop") return yield* Effect.as(runtime.removeFile(bankId), false)
      if (!existsSync(runtime.filePath(bankId))) return false
      return yield* runtime.writeFile(bankId, { mode: "incremental" }).pipe(
        Effect.as(true),
        Effect.catchCause(() => Effect.as(runtime.removeFile(bankId), false))
      )
    }).pipe(Effect.withSpan("KeptBrainFiles.rewrite", { attributes: { bankId } }))
  )
  if (!settings.keepFiles) return
  const writing = new Set<string>()

  const write = (bankId: string) =>
    runtime.writeFile(bankId, { mode: "incremental" }).pipe(
      Effect.tap((written) =>
        written.reused ? Effect.void : Effect.logInfo(`kept the brain of bank ${bankId} in ${written.path}`)
      ),
      // A bank deleted since (a branch's read copy removed with its branch right after a read) has nothing to keep.
      Effect.catchTag("NotFound", () => Effect.logDebug(`bank ${bankId} is gone; its brain is not kept`)),
      Effect.catchCause((cause) => Effect.logWarning(`could not keep the brain of bank ${bankId} in its file`, cause)),
      Effect.withSpan("KeptBrainFiles.write", { attributes: { bankId } })
    )

  const load = (bankId: string) =>
    Effect.gen(function*() {
      const content = yield* runtime.readFile(bankId)
      if (Option.isNone(content) || content.value.bankId !== bankId) return Option.none<KeptBrain>()
      const brain = yield* runSlicedOrFail(
        brainOfFileSliced(content.value, runtime.modelSignature),
        Effect.yieldNow,
        (thrown) => thrown
      )
      if ("reason" in brain) {
        yield* Effect.logInfo(`the brain file of bank ${bankId} is not loaded: ${brain.reason}`)
        return Option.none<KeptBrain>()
      }
      // The HNSW index kept with it, when there is one: otherwise the bank's index is built in the background.
      const index = yield* runtime.keptIndex(bankId, content.value)
      if (Option.isSome(index)) yield* runSliced(brain.records.adoptingIndex(index.value), Effect.yieldNow)
      return Option.some(brain)
    }).pipe(
      // Whatever went wrong, the brain is built from the tables as if there were no file.
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning(`could not load the brain file of bank ${bankId}`, cause), Option.none<KeptBrain>())
      ),
      Effect.withSpan("KeptBrainFiles.load", { attributes: { bankId } })
    )

  const keep = (bankId: string, memories: number) =>
    Effect.suspend(() => {
      if (memories < settings.keepFilesMinMemories || writing.has(bankId)) return Effect.void
      writing.add(bankId)
      return write(bankId).pipe(Effect.ensuring(Effect.sync(() => writing.delete(bankId))))
    })

  const keepNow = (bankId: string) =>
    Effect.suspend(() => {
      if (writing.has(bankId)) return Effect.void
      writing.add(bankId)
      return write(bankId).pipe(Effect.ensuring(Effect.sync(() => writing.delete(bankId))))
    })

  yield* brains.attachFiles({ load, keep, keepNow })

  // A file that already describes the bank as it is is kept as it is (`writeFile` compares before it writes).
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      for (const bankId of yield* brains.loadedBanks) {
        const state = yield* brains.state(bankId)
        if ((state.dataVersion?.memories ?? 0) >= settings.keepFilesMinMemories) yield* write(bankId)
      }
    }).pipe(
      Effect.timeoutOption(stopBudget),
      Effect.catchCause((cause) => Effect.logWarning("could not keep every brain in its file at shutdown", cause))
    )
  )
}))

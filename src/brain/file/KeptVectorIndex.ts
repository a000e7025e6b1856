/**
 * A bank's HNSW index kept beside its `.brain` file, so a start or a brain released while idle does not build it
 * again (about 45 s of a core at 100k memories). The index is its own file, `<bank>.<random>.hnsw` in the cache
 * directory, written and sealed (`HnswFile.sealIndexFile`) before the `.brain` file that names it is renamed into
 * place, so a file on disk never names an index that is not whole. Each write takes a new name and removes the bank's
 * other index files after the `.brain` file is in place; removing the `.brain` file removes them too.
 *
 * The `.brain` file names the index, its size and each label's memory (`VectorIndexRef`). A file from elsewhere (an
 * import) can only name an index file of its own bank in this directory; the header is checked before the native
 * reader sees it, and every label is checked against the memories the file holds (`MemoryRecords.adoptIndex`).
 */
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { readdir, rm, stat } from "node:fs/promises"
import { join } from "node:path"
import type { VectorIndexRef } from "./BrainFile.ts"
import { describeIndexFile, sealIndexFile } from "../vectors/HnswFile.ts"
import { HnswIndex } from "../vectors/HnswIndex.ts"

const namePattern = /^(.*)\.[0-9a-f]{32}\.hnsw$/

const isIndexFileOf = (bankId: string, name: string) => namePattern.exec(name)?.[1] === encodeURIComponent(bankId)

/** Removes a file, whatever stands in the way (a missing or unwritable directory leaves nothing to remove). */
export const removeQuietly = (path: string) => Effect.promise(() => rm(path, { force: true }).catch(() => undefined))

/** A fresh name for the bank's next index file. */
export const newIndexFileName = (bankId: string) =>
  `${encodeURIComponent(bankId)}.${randomBytes(16).toString("hex")}.hnsw`

/** Removes the bank's index files in `directory`, all but `except`. */
export const removeIndexFiles = (directory: string, bankId: string, except?: string) =>
  Effect.promise(async () => {
    const names = await readdir(directory).catch(() => [] as Array<string>)
    for (const name of names) {
      if (name !== except && isIndexFileOf(bankId, name)) {
        await rm(join(directory, name), { force: true }).catch(() => {})
      }
    }
  })

/** Seals the index just written (see `HnswFile`) and describes it for the `.brain` file. */
export const sealedIndex = (directory: string, name: string, labelPositions: Int32Array) =>
  Effect.tryPromise(async (): Promise<VectorIndexRef> => {
    const path = join(directory, name)
    await sealIndexFile(path)
    const { size } = await stat(path)
    return { file: name, bytes: size, labelPositions }
  })

/** The path of the bank's index file `file` when it is there with `bytes` bytes; undefined otherwise. */
const wholeIndexPath = async (directory: string, bankId: string, file: unknown, bytes: unknown) => {
  if (typeof file !== "string" || !isIndexFileOf(bankId, file)) return undefined
  const path = join(directory, file)
  const found = await stat(path).catch(() => undefined)
  return found !== undefined && found.size === bytes ? path : undefined
}

/** Whether the index a `.brain` file's manifest names (its `vector_index` field) is there, whole. */
export const keptIndexPresent = (directory: string, bankId: string, manifestField: unknown) =>
  Effect.promise(async () => {
    if (typeof manifestField !== "object" || manifestField === null) return false
    const { bytes, file } = manifestField as Record<string, unknown>
    return (await wholeIndexPath(directory, bankId, file, bytes)) !== undefined
  })

/**
 * The index a kept `.brain` file names, read back (on the thread pool) with each label naming its memory among
 * `ids` (the file's memories in order); none when it is missing, not whole, or does not fit.
 */
export const readKeptIndex = (
  directory: string,
  bankId: string,
  ref: VectorIndexRef,
  ids: ReadonlyArray<string>,
  dimensions: number
) =>
  Effect.gen(function*() {
    const path = yield* Effect.promise(() => wholeIndexPath(directory, bankId, ref.file, ref.bytes))
    if (path === undefined) return Option.none<HnswIndex>()
    const idOfLabel = Array.from(ref.labelPositions, (position) => position >= 0 ? ids[position] : undefined)
    const index = yield* Effect.tryPromise(async () => {
      const described = await describeIndexFile(path)
      if (described.points !== idOfLabel.length || described.vectorBytes !== dimensions * 4) {
        throw new RangeError("the index file does not hold the points its brain file names")
      }
      return HnswIndex.readFrom(path, dimensions, idOfLabel)
    })
    return Option.some(index)
  }).pipe(
    Effect.catch((error) =>
      Effect.as(
        Effect.logInfo(`the vector index kept for bank ${bankId} is not used; it is built again`, { reason: error }),
        Option.none<HnswIndex>()
      )
    )
  )

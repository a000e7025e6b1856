/**
 * Writes a file so that readers see the old version or the new one, never a part: a temporary file in the same
 * directory, flushed to disk (fsync), then renamed over the target, and the directory flushed so the rename
 * survives a crash. A failed write removes its temporary file; one cut short by the process ending (a stop that ran
 * out of time, a kill) is left behind and removed by `removeStaleTemporaries` at the next start.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises"
import { dirname, join } from "node:path"

export class FileWriteError extends Error {}

const temporaryPrefix = ".brain-"
const temporarySuffix = ".tmp"

/**
 * Removes the temporary files of writes that never finished, once they are older than `olderThanMs`: the directory
 * may be shared by several nodes, so a young one can be another process's write in progress. Returns how many
 * went; a directory that does not exist (nothing written yet) has none.
 */
export const removeStaleTemporaries = (directory: string, olderThanMs: number) =>
  Effect.promise(async () => {
    const names = await readdir(directory).catch(() => [] as Array<string>)
    const cutoff = Date.now() - olderThanMs
    let removed = 0
    for (const name of names) {
      if (!name.startsWith(temporaryPrefix) || !name.endsWith(temporarySuffix)) continue
      const path = join(directory, name)
      const modified = await stat(path).then((info) => info.mtimeMs, () => undefined)
      if (modified === undefined || modified > cutoff) continue
      // A directory or a file this process may not remove under a temporary's name: leave it, remove the rest.
      if (await rm(path, { force: true }).then(() => true, () => false)) removed++
    }
    return removed
  })

export const writeAtomically = (path: string, bytes: Uint8Array) =>
  Effect.tryPromise({
    try: async () => {
      const directory = dirname(path)
      await mkdir(directory, { recursive: true })
      const temporary = join(directory, `${temporaryPrefix}${randomUUID()}${temporarySuffix}`)
      try {
        const handle = await open(temporary, "w", 0o600)
        try {
          await handle.writeFile(bytes)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await rename(temporary, path)
      } catch (error) {
        await rm(temporary, { force: true })
        throw error
      }
      // Flush the directory entry; some file systems refuse to open a directory for this, which is harmless.
      const dir = await open(directory, "r").catch(() => undefined)
      if (dir !== undefined) {
        try {
          await dir.sync()
        } catch {
          // harmless, as above
        } finally {
          await dir.close()
        }
      }
    },
    catch: (error) => new FileWriteError(`could not write ${path}: ${(error as Error).message}`)
  })

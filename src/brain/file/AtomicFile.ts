/**
 * Writes a file so that readers see the old version or the new one, never a part: a temporary file in the same
 * directory, flushed to disk (fsync), then renamed over the target, and the directory flushed so the rename
 * survives a crash. A failed write removes its temporary file.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { mkdir, open, rename, rm } from "node:fs/promises"
import { dirname, join } from "node:path"

export class FileWriteError extends Error {}

export const writeAtomically = (path: string, bytes: Uint8Array) =>
  Effect.tryPromise({
    try: async () => {
      const directory = dirname(path)
      await mkdir(directory, { recursive: true })
      const temporary = join(directory, `.brain-${randomUUID()}.tmp`)
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
      if (dir !== undefined) await dir.sync().catch(() => undefined).finally(() => dir.close())
    },
    catch: (error) => new FileWriteError(`could not write ${path}: ${(error as Error).message}`)
  })

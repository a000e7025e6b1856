/**
 * One server per PGlite data directory. PostgreSQL's postmaster refuses a second server on its data directory; PGlite
 * has no such guard, and two processes writing one directory corrupt it for good (seen while benchmarking: a second
 * server started on a directory another still used left a catalog whose key columns read back empty, and the next
 * start failed). Beside the directory, `<dir>.lock` names the process that holds it. A lock whose process is gone (a
 * crash, a kill) is taken over; one whose process lives is a start-up error naming it. Within one process a directory
 * is held once (a second open of it fails the same way), so a lock naming this process that no open here holds is a
 * previous life's (a container's PID 1 after a restart) and is taken over too.
 */
import { Effect } from "effect"
import { mkdir, open, readFile, rm } from "node:fs/promises"
import * as Path from "node:path"

/** Directories this process holds now. */
const held = new Set<string>()

export class DataDirInUse extends Error {}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const lockPathOf = (directory: string) => `${directory}.lock`

const holderOf = async (lockPath: string): Promise<number | undefined> => {
  const text = await readFile(lockPath, "utf8").catch(() => "")
  const pid = Number.parseInt(text.trim(), 10)
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}

const take = async (directory: string): Promise<void> => {
  const lockPath = lockPathOf(directory)
  if (held.has(directory)) {
    throw new DataDirInUse(`the data directory ${directory} is already open in this process`)
  }
  await mkdir(Path.dirname(lockPath), { recursive: true })
  for (let attempt = 0; attempt < 3; attempt++) {
    const file = await open(lockPath, "wx", 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return undefined
      throw error
    })
    if (file !== undefined) {
      try {
        await file.writeFile(`${process.pid}\n`)
      } finally {
        await file.close()
      }
      held.add(directory)
      return
    }
    const holder = await holderOf(lockPath)
    if (holder !== undefined && holder !== process.pid && alive(holder)) {
      throw new DataDirInUse(
        `the data directory ${directory} is in use by process ${holder} (another engram server?); stop it, or remove ` +
          `${lockPath} if no such process uses the directory`
      )
    }
    // Its process is gone: the lock is stale.
    await rm(lockPath, { force: true })
  }
  throw new DataDirInUse(`could not lock the data directory ${directory} (${lockPath} keeps reappearing)`)
}

const release = async (directory: string): Promise<void> => {
  held.delete(directory)
  const lockPath = lockPathOf(directory)
  if ((await holderOf(lockPath)) === process.pid) await rm(lockPath, { force: true })
}

/** Holds `dataDir` (none for an in-memory database) for the scope; fails when another server holds it. */
export const lockDataDir = (dataDir: string | undefined) =>
  dataDir === undefined
    ? Effect.void
    : Effect.acquireRelease(
      Effect.tryPromise({ try: () => take(Path.resolve(dataDir)), catch: (error) => error as Error }),
      () => Effect.promise(() => release(Path.resolve(dataDir)).catch(() => undefined))
    )

/**
 * Opens PGlite with pgvector, persisted under a data directory (created if missing) or in memory. The one way both
 * the event-loop variant and the worker thread open it, so they agree on files and extensions; it does not decide
 * which thread it runs on.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { mkdir } from "node:fs/promises"
import * as Path from "node:path"

export const openPglite = async (dataDir: string | undefined): Promise<PGlite> => {
  if (dataDir === undefined) return PGlite.create({ extensions: { vector } })
  const path = Path.resolve(dataDir)
  await mkdir(path, { recursive: true })
  return PGlite.create({ dataDir: path, extensions: { vector } })
}

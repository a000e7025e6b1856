/**
 * Entry point of the short-lived process `PgliteOpen` starts to create a new PGlite data directory: runs initdb there
 * with the server's start parameters, closes, and exits. Never imported; a failure exits non-zero with the reason on
 * stderr.
 */
import { PGlite } from "@electric-sql/pglite"

const [dataDir, startParams] = process.argv.slice(2)
if (dataDir === undefined || startParams === undefined) {
  throw new Error("usage: pgliteInitdb.ts <dataDir> <startParams as JSON>")
}
const db = await PGlite.create({ dataDir, startParams: JSON.parse(startParams) as Array<string> })
await db.close()

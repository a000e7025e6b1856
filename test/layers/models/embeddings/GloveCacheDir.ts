/**
 * One GloVe cache per machine for the test suite: converting the package's JSON takes a few seconds, so the
 * embedding tests share `<tmp>/engram-glove-cache` across files and runs (a fresh CI machine converts once).
 * vitest.config.ts names it before the run moves TMPDIR into its own scratch directory, so it outlives the run.
 */
import { tmpdir } from "node:os"
import * as Path from "node:path"

/** The shared cache directory itself (for `glove({ cacheDir })`). */
export const sharedGloveCacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??
  Path.join(tmpdir(), "engram-glove-cache", "models")

/** A data directory whose `models/` holds the shared cache (for `layerConfig`, which derives it). */
export const sharedGloveDataDir = Path.dirname(sharedGloveCacheDir)

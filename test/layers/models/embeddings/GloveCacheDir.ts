/**
 * One GloVe cache per machine for the test suite: converting the package's JSON takes a few seconds, so the
 * embedding tests share `<tmp>/engram-glove-cache` across files and runs (a fresh CI machine converts once).
 */
import { tmpdir } from "node:os"
import * as Path from "node:path"

/** A data directory whose `models/` holds the shared cache (for `layerConfig`, which derives it). */
export const sharedGloveDataDir = Path.join(tmpdir(), "engram-glove-cache")

/** The shared cache directory itself (for `glove({ cacheDir })`). */
export const sharedGloveCacheDir = Path.join(sharedGloveDataDir, "models")

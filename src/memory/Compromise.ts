/**
 * The one compromise of the process (part-of-speech tags for offline extraction and time expressions), loaded from
 * the package's single-file build. Its ES module entry is 464 files: loading them was 460 ms of every start (module
 * resolution, reading and linking, not compromise's own set-up), against 290 ms for the same version as one file
 * (`node bench/start-cost.ts`). The package's `require` condition names that build; the types are the same package's.
 */
import type nlpType from "compromise"
import { createRequire } from "node:module"

export const nlp: typeof nlpType = createRequire(import.meta.url)("compromise")

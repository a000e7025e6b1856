/**
 * transformers.js in one place. Its `env` is global to the process, and the embedder and the reranker each used to
 * set it on load, the second overwriting the first: a reranker loaded after an embedder moved the embedder's
 * download cache to its own, or switched its downloads back on. Here the module is imported once, on first use (with
 * ONNX Runtime it takes 42 MiB of a process, which a server on GloVe never needs), `env` is set once to values no
 * model changes (local folders are read by absolute path, downloads are allowed), and everything particular to a
 * model travels with its own load: the absolute path of its local copy and `local_files_only`, or its download cache.
 */
import { Effect } from "effect"
import { resolve } from "node:path"

export type Transformers = typeof import("@huggingface/transformers")

export interface ModelFiles {
  /** Local model copies (`<modelsDir>/<model>/…`); set, this model is read from there and never downloaded. */
  readonly modelsDir?: string | undefined
  /** Where this model's downloads are cached (ignored with `modelsDir`). */
  readonly cacheDir?: string | undefined
}

/** The options of a `from_pretrained`/`pipeline` call that say where this model's files come from. */
export interface FileOptions {
  readonly cache_dir?: string
  readonly local_files_only?: boolean
}

let imported: Promise<Transformers> | undefined

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

/** transformers.js, and how this model's loads name it (`modelId`) and where its files come from (`fileOptions`). */
export const loadTransformers = (files: ModelFiles): Effect.Effect<{
  readonly transformers: Transformers
  readonly modelId: (model: string) => string
  readonly fileOptions: FileOptions
}, Error> =>
  Effect.tryPromise({
    try: () => (imported ??= import("@huggingface/transformers").then((transformers) => {
      const { env } = transformers
      // A local copy is named by its absolute path (`modelId`), so the folder is no global setting.
      env.allowLocalModels = true
      env.localModelPath = "/"
      env.allowRemoteModels = true
      return transformers
    })),
    catch: (error) => new Error(`cannot load transformers.js: ${describe(error)}`)
  }).pipe(Effect.map((transformers) => {
    const local = files.modelsDir
    return local !== undefined
      ? { transformers, modelId: (model) => resolve(local, model), fileOptions: { local_files_only: true } }
      : {
        transformers,
        modelId: (model) => model,
        fileOptions: files.cacheDir === undefined ? {} : { cache_dir: files.cacheDir }
      }
  }))

/**
 * Word-level neighbours for query expansion in keyword search ("painted" also finds "painting", "mural"). The
 * offline deployment serves them from the GloVe table its embedder already loaded; `none` expands nothing.
 */
import { Context, Layer } from "effect"

export class WordVectors extends Context.Service<WordVectors, {
  /** Up to `k` words closest in meaning to `word`, closest first; empty for unknown words. */
  readonly nearest: (word: string, k: number) => ReadonlyArray<{ readonly word: string; readonly similarity: number }>
}>()("engram/models/WordVectors") {
  static readonly none = Layer.succeed(WordVectors)(WordVectors.of({ nearest: () => [] }))
}

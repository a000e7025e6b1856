/**
 * A cross-encoder reranker (e.g. `Xenova/ms-marco-MiniLM-L-6-v2`) through `@huggingface/transformers`: each
 * (query, candidate) pair is tokenized together, truncated, and scored by the sequence-classification head;
 * one logit becomes a probability with the logistic function, several with a softmax over the last label.
 * Pairs run in batches, one inference at a time. Local copies under `modelsDir` switch remote downloads off.
 */
import { Duration, Effect, Semaphore } from "effect"
import { Reranker, RerankError } from "../../../src/models/Reranker.ts"
import { loadTransformers } from "../Transformers.ts"

export const DEFAULT_RERANKER_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"

export interface OnnxRerankerOptions {
  /** A model id or a folder name under `modelsDir`. */
  readonly model: string
  readonly modelsDir?: string | undefined
  readonly cacheDir?: string | undefined
  /** Weights to load. Default `q8` (`onnx/model_quantized.onnx`). */
  readonly dtype?: "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | undefined
  /** Pairs per inference call. Default 16. */
  readonly batchSize?: number | undefined
  /** Candidates recall sends. Default 16: MiniLM-L6 over 16 pairs takes about 110 ms on one CPU core, 32 about 290 ms. */
  readonly maxCandidates?: number | undefined
  /** Longest wait for a rerank. Default 250 ms. */
  readonly timeout?: Duration.Input | undefined
  /** Tokens per pair; longer memories are cut. Default 256. */
  readonly maxLength?: number | undefined
  readonly threads?: number | undefined
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

/** Probability of relevance for each row of `[rows, labels]` logits. */
export const relevance = (logits: Float32Array, rows: number): Array<number> => {
  const labels = logits.length / rows
  return Array.from({ length: rows }, (_, row) => {
    if (labels === 1) return sigmoid(logits[row]!)
    const slice = logits.subarray(row * labels, (row + 1) * labels)
    const top = Math.max(...slice)
    let sum = 0
    for (const value of slice) sum += Math.exp(value - top)
    return Math.exp(slice[labels - 1]! - top) / sum
  })
}

export const make = Effect.fnUntraced(function*(options: OnnxRerankerOptions) {
  const { transformers, modelId, fileOptions } = yield* loadTransformers(options).pipe(
    Effect.mapError((error) => new RerankError({ message: error.message }))
  )
  const { AutoModelForSequenceClassification, AutoTokenizer } = transformers
  const where = options.modelsDir === undefined ? "(downloads allowed)" : `in ${options.modelsDir}`
  const load = Effect.tryPromise({
    try: async () => {
      const tokenizer = await AutoTokenizer.from_pretrained(modelId(options.model), fileOptions)
      const model = await AutoModelForSequenceClassification.from_pretrained(modelId(options.model), {
        ...fileOptions,
        dtype: options.dtype ?? "q8",
        ...(options.threads === undefined ? {} : { session_options: { intraOpNumThreads: options.threads } })
      })
      return { tokenizer, model }
    },
    catch: (error) => new RerankError({ message: `cannot load reranker ${options.model} ${where}: ${describe(error)}` })
  })
  const { tokenizer, model } = yield* Effect.acquireRelease(load, ({ model }) => Effect.promise(() => model.dispose()))
  const batchSize = Math.max(1, options.batchSize ?? 16)
  const maxLength = options.maxLength ?? 256
  const turn = yield* Semaphore.make(1)

  const scoreBatch = (query: string, texts: ReadonlyArray<string>) =>
    turn.withPermits(1)(Effect.tryPromise({
      try: async () => {
        const inputs = tokenizer(texts.map(() => query), {
          text_pair: [...texts],
          padding: true,
          truncation: true,
          max_length: maxLength
        })
        const output = await model(inputs)
        return relevance(output.logits.data as Float32Array, texts.length)
      },
      catch: (error) => new RerankError({ message: `reranker inference failed: ${describe(error)}` })
    }))

  return Reranker.of({
    identity: { provider: "onnx", model: options.model },
    maxCandidates: Math.max(1, options.maxCandidates ?? 16),
    timeout: Duration.fromInputUnsafe(options.timeout ?? Duration.millis(250)),
    score: Effect.fn("OnnxReranker.score")(function*(query: string, texts: ReadonlyArray<string>) {
      const scores: Array<number> = []
      for (let start = 0; start < texts.length; start += batchSize) {
        scores.push(...(yield* scoreBatch(query, texts.slice(start, start + batchSize))))
      }
      return scores
    })
  })
})

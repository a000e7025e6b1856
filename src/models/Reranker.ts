/**
 * A cross-encoder reranker: reads the query and each candidate together and scores how well the candidate
 * answers it. Optional — recall uses its deterministic reranker when no `Reranker` is provided — and bounded:
 * recall sends at most `maxCandidates` and waits at most `timeout`, then keeps the deterministic order, so a
 * slow model can never dominate recall's latency.
 */
import { Context, Data, type Duration, type Effect } from "effect"

export class RerankError extends Data.TaggedError("RerankError")<{ readonly message: string }> {}

export class Reranker extends Context.Service<Reranker, {
  readonly identity: { readonly provider: string; readonly model: string }
  /** Relevance of each text to the query in [0, 1], higher is better, in input order. */
  readonly score: (query: string, texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<number>, RerankError>
  /** How many of the best candidates recall sends to `score`. */
  readonly maxCandidates: number
  /** How long recall waits for `score` before keeping the deterministic order. */
  readonly timeout: Duration.Duration
}>()("engram/models/Reranker") {}

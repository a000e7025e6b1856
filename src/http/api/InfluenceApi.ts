/** Influence route: the leaderboard of what shapes the bank's answers, with its heatmap, trend and anomalies. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { BrainInfluenceResponse, InfluenceQuery } from "../../domain/BrainInfluence.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"

export class InfluenceApi extends HttpApiGroup.make("brainInfluence")
  .add(
    HttpApiEndpoint.get("influence", "/v1/default/banks/:bank_id/brain/influence", {
      params: { bank_id: BankId },
      query: InfluenceQuery,
      success: BrainInfluenceResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Influence leaderboard over the last `window_days` of access telemetry: each memory, chunk or mental " +
        "model scored from recency (0.28), frequency (0.26), PageRank in the bank's graph (0.18), its mean rerank " +
        "score in recalls (0.14) and dream runs (0.14), with each factor's contribution; a 7×24 weekday/hour " +
        "heatmap of reads, a daily trend with EWMA and 90 % band, and robust-z / IQR anomalies of that trend."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Brain influence" }))
{}

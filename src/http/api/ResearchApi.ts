/** Internet research: a question answered from the public web, never from or into the bank. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ServiceUnavailable } from "../../domain/Errors.ts"
import {
  ResearchNotConfigured,
  ResearchRequest,
  ResearchResponse,
  ResearchUpstreamError
} from "../../domain/Research.ts"

export class ResearchApi extends HttpApiGroup.make("research")
  .add(
    HttpApiEndpoint.post("research", "/v1/default/banks/:bank_id/internet/research", {
      params: { bank_id: BankId },
      payload: ResearchRequest,
      success: ResearchResponse,
      error: [NotFound, ResearchNotConfigured, ResearchUpstreamError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Answer a question from the public web only: search with the configured provider (SERVICE_API_WEB_SEARCH_*), " +
        "read the top pages within limits, answer with the bank's reflect model citing sources as [n]. Neither " +
        "reads nor writes the bank's memories (`writes_to_bank` is always false). 400 when no provider is configured."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Research", description: "Answers from the public web" }))
{}

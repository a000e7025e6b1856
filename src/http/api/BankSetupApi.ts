/** A bank's deprecated background route and the check of the language model its operations use. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { AddBackgroundRequest, BackgroundResponse } from "../../domain/BankBackground.ts"
import { NotFound } from "../../domain/Errors.ts"
import { BankLlmHealthResponse } from "../../domain/LlmHealth.ts"

const bank = { bank_id: BankId }

export class BankSetupApi extends HttpApiGroup.make("bankSetup")
  .add(
    HttpApiEndpoint.post("addBackground", "/v1/default/banks/:bank_id/background", {
      params: bank,
      payload: AddBackgroundRequest,
      success: BackgroundResponse
    }).annotate(OpenApi.Deprecated, true).annotate(
      OpenApi.Description,
      "Deprecated (use PUT /v1/default/banks/{bank_id} with reflect_mission): appends the text to the bank's " +
        "mission, unless the mission already holds it; creates the bank if needed."
    ),
    HttpApiEndpoint.post("testLlm", "/v1/default/banks/:bank_id/health/llm", {
      params: bank,
      success: BankLlmHealthResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Sends one minimal request to the language model of each operation (retain, consolidation, reflect; a model " +
        "they share is asked once) and reports its status and latency — never the provider, model, endpoint or key. " +
        "With no language model configured (the offline default) every operation is 'not_configured'."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Bank setup", description: "Background and language-model check" }))
{}

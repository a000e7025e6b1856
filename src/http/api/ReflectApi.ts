/** Reflect routes: answer now, or queue the same request as a durable `reflect` operation. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import { OperationAccepted } from "../../domain/Operation.ts"
import { ReflectRequest, ReflectResponse } from "../../domain/Reflect.ts"

const bank = { bank_id: BankId }

export class ReflectApi extends HttpApiGroup.make("reflect")
  .add(
    HttpApiEndpoint.post("reflect", "/v1/default/banks/:bank_id/reflect", {
      params: bank,
      payload: ReflectRequest,
      success: ReflectResponse,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Answer a question from the bank's memories: an agent searches mental models, observations and facts and " +
        "answers under the bank's mission, directives and disposition (offline: a labelled summary of the best memories)."
    ),
    HttpApiEndpoint.post("submit", "/v1/default/banks/:bank_id/reflect/submit", {
      params: bank,
      payload: ReflectRequest,
      success: OperationAccepted,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Queue a reflect as a `reflect` operation; its result (a ReflectResponse) is at operations/{operation_id}/result."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Reflect", description: "Reason over a bank's memories" }))
{}

/** The forget route: memories about an entity, ids, a document or a tag, with everything derived from them. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import { ForgetReport, ForgetRequest } from "../../domain/Forget.ts"

export class ForgetApi extends HttpApiGroup.make("forgetting")
  .add(
    HttpApiEndpoint.post("forget", "/v1/default/banks/:bank_id/forget", {
      params: { bank_id: BankId },
      payload: ForgetRequest,
      success: ForgetReport,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Forget every memory naming an entity (or with the given ids, document or tag) and everything derived from " +
        "it — observations, the entity and its trajectory, the entity map, mental models (emptied and refreshed), " +
        "dream evidence, anomalies, access history, orphaned chunks and documents, dataset sets; the brain and its " +
        "kept file follow. Deleted in one transaction (a large forget in slices first). `dry_run` reports " +
        "what would go and changes nothing. Memory repo " +
        "commits that may hold the content are listed; `purge_history: true` rewrites them without it (the one " +
        "history-rewriting operation: commit ids change, the report maps old to new)."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Forgetting" }))
{}

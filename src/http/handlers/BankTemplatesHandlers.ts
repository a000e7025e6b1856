/** REST handlers for bank templates, over the `BankTemplates` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BankTemplates, manifestJsonSchema } from "../../bank/BankTemplates.ts"
import { EngramApi } from "../api/Api.ts"

export const BankTemplatesHandlers = HttpApiBuilder.group(
  EngramApi,
  "templates",
  Effect.fn(function*(handlers) {
    const templates = yield* BankTemplates
    return handlers.handleAll({
      exportTemplate: ({ params }) => templates.exportTemplate(params.bank_id),
      importTemplate: ({ params, payload, query }) =>
        templates.importTemplate(params.bank_id, payload, { dryRun: query.dry_run ?? false }),
      templateSchema: () => Effect.succeed(manifestJsonSchema)
    })
  })
)

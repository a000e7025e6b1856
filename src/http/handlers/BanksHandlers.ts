/** REST handlers for banks: thin translations between the HTTP contract and the `Banks` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { toBankResponse, toConfigView, toListItem, toProfile } from "../../bank/BankViews.ts"
import { Banks } from "../../bank/Banks.ts"
import type { BankUpdate } from "../../domain/Bank.ts"
import { ValidationError } from "../../domain/Errors.ts"
import { EngramApi } from "../api/Api.ts"
import { reachable } from "../../auth/BankAccess.ts"

export const BanksHandlers = HttpApiBuilder.group(
  EngramApi,
  "banks",
  Effect.fn(function*(handlers) {
    const banks = yield* Banks
    const view = <E, R>(effect: Effect.Effect<Parameters<typeof toBankResponse>[0], E, R>) =>
      Effect.map(effect, (bank) => toBankResponse(bank, banks.defaults))
    const config = <E, R>(effect: Effect.Effect<Parameters<typeof toConfigView>[0], E, R>) =>
      Effect.map(effect, (bank) => toConfigView(bank, banks.defaults))

    return handlers.handleAll({
      // A key of SERVICE_API_TENANT_API_KEYS sees only its banks.
      list: () =>
        banks.list.pipe(
          Effect.flatMap((all) => reachable(all, (bank) => bank.bankId)),
          Effect.map((all) => ({ banks: all.map(toListItem) }))
        ),
      put: ({ params, payload }) => view(banks.put(params.bank_id, payload)),
      patch: ({ params, payload }) => view(banks.patch(params.bank_id, payload)),
      delete: ({ params }) =>
        banks.remove(params.bank_id).pipe(
          Effect.as({
            success: true,
            message: `bank '${params.bank_id}' and everything it owned deleted`,
            deleted_count: null
          })
        ),
      getProfile: ({ params }) => Effect.map(banks.ensure(params.bank_id), toProfile),
      putProfile: ({ params, payload }) =>
        Effect.map(banks.put(params.bank_id, { disposition: payload.disposition }), toProfile),
      stats: ({ params }) =>
        Effect.map(banks.stats(params.bank_id), (stats) => ({ bank_id: params.bank_id, ...stats })),
      getConfig: ({ params }) => config(banks.get(params.bank_id)),
      patchConfig: ({ params, payload }) => {
        const { updates, ...fields } = payload
        // Settings come in `updates` (Hindsight's shape) or flat; a body with neither changes nothing and is
        // refused, as Hindsight clients expect for a request without its required `updates`.
        if (updates === undefined && Object.keys(fields).length === 0) {
          return Effect.fail(ValidationError.single("updates", "is required: an object of the settings to change"))
        }
        const update: BankUpdate = { ...fields, ...updates }
        // A new retention policy is checked as soon as it is saved (RetentionChecks reacts to settings changes).
        return config(banks.patch(params.bank_id, update))
      },
      resetConfig: ({ params }) => config(banks.resetConfig(params.bank_id))
    })
  })
)

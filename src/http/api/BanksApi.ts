/** Bank routes: list, create/update, delete, the deprecated profile, statistics and configuration. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  BankConfigResponse,
  BankConfigUpdate,
  BankId,
  BankListResponse,
  BankProfileResponse,
  BankResponse,
  BankStatsResponse,
  BankUpdate,
  DeleteResponse,
  ProfileUpdate
} from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }

export class BanksApi extends HttpApiGroup.make("banks")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks", { success: BankListResponse }),
    HttpApiEndpoint.put("put", "/v1/default/banks/:bank_id", {
      params: bank,
      payload: BankUpdate,
      success: BankResponse
    }),
    HttpApiEndpoint.patch("patch", "/v1/default/banks/:bank_id", {
      params: bank,
      payload: BankUpdate,
      success: BankResponse,
      error: NotFound
    }),
    HttpApiEndpoint.delete("delete", "/v1/default/banks/:bank_id", {
      params: bank,
      success: DeleteResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("getProfile", "/v1/default/banks/:bank_id/profile", {
      params: bank,
      success: BankProfileResponse
    }).annotate(OpenApi.Deprecated, true),
    HttpApiEndpoint.put("putProfile", "/v1/default/banks/:bank_id/profile", {
      params: bank,
      payload: ProfileUpdate,
      success: BankProfileResponse
    }).annotate(OpenApi.Deprecated, true),
    HttpApiEndpoint.get("stats", "/v1/default/banks/:bank_id/stats", {
      params: bank,
      success: BankStatsResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("getConfig", "/v1/default/banks/:bank_id/config", {
      params: bank,
      success: BankConfigResponse,
      error: NotFound
    }),
    HttpApiEndpoint.patch("patchConfig", "/v1/default/banks/:bank_id/config", {
      params: bank,
      payload: BankConfigUpdate,
      success: BankConfigResponse,
      error: [NotFound, ValidationError]
    }),
    HttpApiEndpoint.delete("resetConfig", "/v1/default/banks/:bank_id/config", {
      params: bank,
      success: BankConfigResponse,
      error: NotFound
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Banks", description: "Memory banks and their configuration" }))
{}

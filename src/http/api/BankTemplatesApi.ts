/** Bank template routes: export a bank's setup as a manifest, import one (or dry-run it), and the manifest's schema. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { BankTemplateImportResponse, BankTemplateManifest } from "../../domain/BankTemplate.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }

export class BankTemplatesApi extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.get("exportTemplate", "/v1/default/banks/:bank_id/export", {
      params: bank,
      success: BankTemplateManifest,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The bank's configuration overrides, directives and mental models as a template manifest; import it into " +
        "another bank to replicate the setup (memories are not part of it)."
    ),
    HttpApiEndpoint.post("importTemplate", "/v1/default/banks/:bank_id/import", {
      params: bank,
      query: {
        dry_run: Schema.optionalKey(
          Schema.Boolean.annotate({ description: "validate and report only (default false)" })
        )
      },
      payload: BankTemplateManifest,
      success: BankTemplateImportResponse,
      error: ValidationError
    }).annotate(
      OpenApi.Description,
      "Apply a template manifest: settings become the bank's overrides, directives are matched by name and mental " +
        "models by id (updated, else created); the bank is created if needed. All or nothing: a bad field is a 400 " +
        "naming it and nothing changes."
    ),
    HttpApiEndpoint.get("templateSchema", "/v1/bank-template-schema", {
      success: Schema.Record(Schema.String, Schema.Unknown)
    }).annotate(OpenApi.Description, "The JSON Schema of the bank template manifest.")
  )
  .annotateMerge(OpenApi.annotations({ title: "Bank templates", description: "Export and import a bank's setup" }))
{}

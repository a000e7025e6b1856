/**
 * Brain runtime routes: the bank's brain status, its `.brain` file (export, validate, import) and learning from
 * another engram instance. Import and validate take the file as the multipart field `file` or as a raw
 * `application/octet-stream` body.
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import {
  BrainExportQuery,
  BrainImportResponse,
  BrainImportValidationResponse,
  BrainLearnRequest,
  BrainLearnResponse,
  BrainRuntimeStatusResponse
} from "../../domain/Brain.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }

/** The two ways a `.brain` file arrives. */
export const BrainFilePayload = [
  Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array()),
  Schema.Struct({ file: Multipart.SingleFileSchema }).pipe(HttpApiSchema.asMultipart())
] as const

export class BrainApi extends HttpApiGroup.make("brain")
  .add(
    HttpApiEndpoint.get("status", "/v1/default/banks/:bank_id/brain/status", {
      params: bank,
      success: BrainRuntimeStatusResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The bank's brain: its circuit breaker, its `.brain` file (path, size, data version, whether it still matches " +
        "the bank) and metrics (builds, incremental updates, compactions, bytes, last build time, hit rate)."
    ),
    HttpApiEndpoint.get("export", "/v1/default/banks/:bank_id/brain/export", {
      params: bank,
      query: BrainExportQuery,
      success: HttpApiSchema.StreamUint8Array(),
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "The bank's `.brain` file, streamed: graph snapshot and keyword index as binary sections, mental models and, " +
        "with `mode=full_copy`, a bounded copy of recent memories, stamped with the bank's data version."
    ),
    HttpApiEndpoint.post("validate", "/v1/default/banks/:bank_id/brain/import/validate", {
      params: bank,
      payload: BrainFilePayload,
      success: BrainImportValidationResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Checks a `.brain` file for this bank without changing anything: `{valid, version, reason}`, the reason naming " +
        "what is wrong (too short, bad magic, unsupported version, truncated, checksum mismatch, too large, bank mismatch)."
    ),
    HttpApiEndpoint.post("import", "/v1/default/banks/:bank_id/brain/import", {
      params: bank,
      payload: BrainFilePayload,
      success: BrainImportResponse,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Validates and installs a `.brain` file of this bank. When its data version matches the bank's, its graph and " +
        "keyword index are used as they are (`installed: true`): the next recall builds nothing."
    ),
    HttpApiEndpoint.post("learn", "/v1/default/banks/:bank_id/brain/learn", {
      params: bank,
      payload: BrainLearnRequest,
      success: BrainLearnResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Learns from another engram instance as a `brain_learn` operation (an identical learn still pending is reused: " +
        "`deduplicated: true`): its `.brain` export when offered, else its memories, mental models and entities over " +
        "REST. Remote memories are stored re-embedded, tagged `brain-learn` and `source:<remote bank>`, deduplicated."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Brain runtime", description: "The bank's brain as a file, and learning" })
  )
{}

/**
 * `response_schema` support: the client's JSON Schema is imported once per request into an Effect Schema
 * (effect's own JSON Schema importer, draft 2020-12), so an unsupported keyword is a 400 naming the field before
 * any model is called; the model's answer is extracted (code fences, prose around it, JavaScript-ish syntax are
 * tolerated) and validated against it. `pattern` constraints are not enforced: a client-supplied regular
 * expression run on model output could stall the server.
 */
import { JsonSchema, Result, Schema, SchemaRepresentation } from "effect"
import { extractJson } from "../models/JsonRepair.ts"
import { ValidationError } from "../domain/Errors.ts"

export interface ResponseValidator {
  readonly jsonSchema: Record<string, unknown>
  /** The validated value, or a sentence saying what is wrong (shown to the model in the retry). */
  readonly validate: (answer: string) => Result.Result<unknown, string>
}

const bound = (text: string, limit: number) => text.length > limit ? `${text.slice(0, limit)}…` : text

export const responseValidator = (
  jsonSchema: Record<string, unknown>
): Result.Result<ResponseValidator, ValidationError> => {
  let schema: Schema.Top
  try {
    schema = SchemaRepresentation.fromJsonSchemaDocument(JsonSchema.fromSchemaDraft2020_12(jsonSchema as never), {
      patterns: "ignore"
    } as never)
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0]! : String(error)
    return Result.fail(ValidationError.single("response_schema", `cannot be used as a JSON Schema: ${reason}`))
  }
  const decode = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)
  return Result.succeed({
    jsonSchema,
    validate: (answer) => {
      const candidate = extractJson(answer, jsonSchema)
      if (Result.isFailure(candidate)) return Result.fail(candidate.failure)
      const decoded = decode(candidate.success, { errors: "all" })
      return Result.isSuccess(decoded)
        ? Result.succeed(decoded.success)
        : Result.fail(`the JSON does not match the schema: ${bound(decoded.failure.message, 1500)}`)
    }
  })
}

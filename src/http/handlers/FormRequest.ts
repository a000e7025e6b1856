/**
 * The JSON `request` field of a multipart upload (file retain, codebase imports), decoded with the rules of a JSON
 * body: inside a multipart body the edge's caps (`http/TextHygiene`) never saw it, so the same depth and element
 * caps apply before it is parsed, the same text rules after, then the route's schema. Every refusal names its field
 * under `request` (`request`, `request.tags`, `request.files_metadata.0.parser`), whatever step refused it.
 */
import { Effect, Schema } from "effect"
import { ValidationError } from "../../domain/Errors.ts"
import { shapeMessage, shapeProblem } from "../../domain/JsonShape.ts"
import { scanJson } from "../../domain/StorableText.ts"

const underRequest = (field: string) => field === "body" || field === "" ? "request" : `request.${field}`

const refused = (field: string, message: string) => ValidationError.single(underRequest(field), message)

const fromSchema = (error: Schema.SchemaError) => {
  const invalid = ValidationError.fromSchemaError(error, "body")
  const errors = invalid.errors.map((issue) => ({ ...issue, field: underRequest(issue.field) }))
  return new ValidationError({
    detail: errors.map((issue) => `${issue.field}: ${issue.message}`).join("; ") || "request: invalid",
    errors
  })
}

/** A decoder of the `request` field's text for `schema`. */
export const formRequestDecoder = <S extends Schema.Top>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (text: string): Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]> =>
    Effect.gen(function*() {
      const shape = shapeProblem(text)
      if (shape !== undefined) return yield* refused("", shapeMessage(shape))
      const parsed = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => refused("", "is not valid JSON")
      })
      const scanned = scanJson(parsed)
      if (scanned._tag === "Refused") return yield* refused(scanned.field, scanned.message)
      return yield* decode(scanned.value).pipe(Effect.mapError((error) => fromSchema(error as Schema.SchemaError)))
    })
}

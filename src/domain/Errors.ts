/**
 * The errors a client of engram can see. Every one encodes to a JSON body with a human-readable `detail`
 * (existing clients of this API read that field) and carries its HTTP status on the class.
 */
import { Schema, SchemaIssue } from "effect"

export const IssueLocation = Schema.Literals(["body", "query", "path", "header"])
export type IssueLocation = typeof IssueLocation.Type

export class FieldIssue extends Schema.Class<FieldIssue>("engram/FieldIssue")({
  field: Schema.String,
  location: IssueLocation,
  message: Schema.String
}) {}

export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  detail: Schema.String,
  errors: Schema.Array(FieldIssue)
}, { httpApiStatus: 400 }) {
  static single(field: string, message: string, location: IssueLocation = "body") {
    return new ValidationError({
      detail: `${field}: ${message}`,
      errors: [new FieldIssue({ field, location, message })]
    })
  }

  /** Turns a schema decoding failure into one issue per offending field, prefixed with where it was found. */
  static fromSchemaError(error: Schema.SchemaError, location: IssueLocation) {
    const { issues } = standardFormatter(error.issue)
    const errors = issues.map((issue) => {
      const path = (issue.path ?? []).map((segment) =>
        typeof segment === "object" ? String(segment.key) : String(segment)
      )
      return new FieldIssue({ field: path.length === 0 ? location : path.join("."), location, message: issue.message })
    })
    const detail = errors.map((issue) => `${issue.field}: ${issue.message}`).join("; ")
    return new ValidationError({ detail: detail === "" ? "invalid request" : detail, errors })
  }
}

const standardFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  detail: Schema.String,
  resource: Schema.String,
  id: Schema.String
}, { httpApiStatus: 404 }) {
  static of(resource: string, id: string) {
    return new NotFound({ detail: `${resource} '${id}' not found`, resource, id })
  }
}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  detail: Schema.String
}, { httpApiStatus: 409 }) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  detail: Schema.String
}, { httpApiStatus: 401 }) {}

/** The API key is valid but does not reach what was asked for (a bank outside its list, an admin route). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  detail: Schema.String
}, { httpApiStatus: 403 }) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  detail: Schema.String
}, { httpApiStatus: 503 }) {}

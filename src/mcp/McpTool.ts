/**
 * One tool of the MCP endpoint: its name, what an assistant reads about it, its arguments as Effect Schema fields
 * (the JSON Schema clients see is derived from them, and they validate every call), and how it runs against a
 * bank. A tool only translates arguments into a call of the same service the REST handler calls: it must never
 * carry a second implementation of a feature.
 */
import { Effect, Schema, SchemaAST } from "effect"
import type { Conflict, Forbidden, NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"

/** What a tool can fail with; each becomes an `isError` result whose text is the error's `detail`. */
export type ToolError = NotFound | ValidationError | ServiceUnavailable | Conflict | Forbidden

/** MCP tool annotations: hints an assistant (or its user) reads before calling. */
export interface ToolHints {
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly fields: Schema.Struct.Fields
  readonly hints: ToolHints
  /** Offered only on the multi-bank endpoint `/mcp/` (list_banks, create_bank, get_bank_stats). */
  readonly multiBankOnly: boolean
  /**
   * Whether the tool acts on the resolved bank (URL, then `X-Bank-Id`, then the default) and so takes the optional
   * `bank_id` argument on `/mcp/`. `list_banks` and `create_bank` do not: they name no bank or their own.
   */
  readonly usesBank: boolean
  /**
   * Runs with arguments already decoded by `fields`; the result becomes the tool's JSON content. A method, so its
   * parameter is checked bivariantly: each tool's `run` takes its own decoded arguments (see `defineTool`), and a
   * list of tools holds them all.
   */
  run(bankId: string, args: object): Effect.Effect<object, ToolError>
}

/** Declares a tool; `run` sees its arguments typed by `fields` (decoded, defaults applied). */
export const defineTool = <const Fields extends Schema.Struct.Fields>(tool: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly fields: Fields
  readonly hints: ToolHints
  readonly multiBankOnly?: boolean
  readonly usesBank?: boolean
  readonly run: (bankId: string, args: Schema.Struct<Fields>["Type"]) => Effect.Effect<object, ToolError>
}): McpTool => ({ ...tool, multiBankOnly: tool.multiBankOnly ?? false, usesBank: tool.usesBank ?? true })

/** The schema inside an optional field of a REST request (`Schema.optionalKey(X)` → `X`). */
type Inner<S> = S extends Schema.optionalKey<infer I> ? I : S

const unwrap = (schema: Schema.Top): Schema.Top =>
  SchemaAST.isOptional(schema.ast) && "schema" in schema ? schema.schema as Schema.Top : schema

/**
 * An optional argument with the tool's default: clients see `default` in the JSON Schema, and `run` receives the
 * value when the argument is absent. Accepts a REST request field as is (its `optionalKey` is unwrapped), so the
 * tool validates with the same rules as the REST API.
 */
export const withDefault = <S extends Schema.Top>(field: S, value: Inner<S>["Encoded"], description: string) =>
  Schema.withDecodingDefaultKey<Schema.Top>(Effect.succeed(value))(
    unwrap(field).annotate({ description, default: value })
  ) as unknown as Schema.withDecodingDefaultKey<Inner<S>, never>

/** A REST request field (optional or required) with the description an assistant reads for this tool. */
export const described = <S extends Schema.Top>(field: S, description: string): S =>
  field.annotate({ description } as never) as S

/** An optional argument built from a plain schema, with its description. */
export const optional = <S extends Schema.Top>(schema: S, description: string) =>
  Schema.optionalKey(schema.annotate({ description } as never) as S)

/**
 * The tools one MCP endpoint offers, compiled once per mode: on `/mcp/` (multi-bank) every tool, those acting on a
 * bank with an optional `bank_id`; on `/mcp/{bank_id}/` (single-bank) the bank's tools without it. It derives
 * each tool's JSON Schema from its Effect Schema, validates arguments with the same schema, resolves the bank
 * and turns the outcome into a tool result — a failure is an `isError` result an assistant can act on, never a
 * protocol error.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Schema, SchemaAST } from "effect"
import { requireBank } from "../auth/BankAccess.ts"
import { BankId } from "../domain/Bank.ts"
import { FieldIssue, ValidationError } from "../domain/Errors.ts"
import { scanJson } from "../domain/StorableText.ts"
import type { McpTool, ToolError } from "./McpTool.ts"

export type McpMode = "multi" | "single"

/** Where a call's bank comes from when it does not name one: the URL, `X-Bank-Id`, or the configured default. */
export type BankResolver = (argument: string | undefined) => string

export interface ToolCatalog {
  readonly tools: ReadonlyArray<Tool>
  readonly has: (name: string) => boolean
  readonly call: (name: string, args: unknown, resolveBank: BankResolver) => Effect.Effect<CallToolResult>
}

const bankIdArgument = Schema.optionalKey(BankId.annotate({
  description: "The memory bank to use; default: the X-Bank-Id header, else the server's default bank. " +
    "list_banks shows the banks."
}))

const textResult = (text: string, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text }],
  ...(isError ? { isError: true } : {})
})

const success = (value: object): CallToolResult => ({
  ...textResult(JSON.stringify(value), false),
  structuredContent: value as Record<string, unknown>
})

const parseOptions = { errors: "all", onExcessProperty: "error" } as const

/** Schema wording an assistant may not follow, in the terms of a tool call. */
const issueWording: Record<string, string> = { "Missing key": "required" }

/** The error's message, worded so that an assistant can correct its call or find what is missing. */
const explain = (error: ToolError, toolName: string, mode: McpMode): string => {
  switch (error._tag) {
    case "ValidationError":
      return `invalid arguments for ${toolName}: ` +
        (error.errors.length === 0 ?
          error.detail :
          error.errors.map((issue) =>
            `${issue.field === "body" ? "arguments" : issue.field}: ${issueWording[issue.message] ?? issue.message}`
          ).join("; "))
    case "NotFound":
      return error.resource !== "bank" ? error.detail : mode === "multi"
        ? `${error.detail}: list_banks shows the banks; create_bank or a first retain creates one`
        : `${error.detail}: a first retain or update_bank creates it`
    default:
      return error.detail
  }
}

/**
 * The JSON Schema generator drops the description of a field whose last check has no JSON Schema form (a custom
 * filter such as "must not be blank"); put each field's description back on its property.
 */
const withDescriptions = (fields: Schema.Struct.Fields, properties: object) =>
  Object.fromEntries(
    Object.entries(properties as Record<string, Record<string, unknown>>).map(([name, property]) => {
      const description = fields[name] === undefined ? undefined : SchemaAST.resolveDescription(fields[name].ast)
      const restore = property["description"] === undefined && description !== undefined
      return [name, restore ? { ...property, description } : property]
    })
  )

/**
 * Refuses arguments the tool does not have. Decoding refuses them too, except for a tool without arguments (an
 * empty struct accepts any object), so the check is made here once for all.
 */
const rejectUnknown = (args: unknown, fields: Schema.Struct.Fields): Effect.Effect<unknown, ValidationError> => {
  const unknown = typeof args === "object" && args !== null ? Object.keys(args).filter((key) => !(key in fields)) : []
  const message = "unknown argument (the tool's input schema lists its arguments)"
  return unknown.length === 0 ? Effect.succeed(args) : Effect.fail(
    new ValidationError({
      detail: unknown.map((key) => `${key}: ${message}`).join("; "),
      errors: unknown.map((field) => new FieldIssue({ field, location: "body", message }))
    })
  )
}

/** The API's text rules (`http/TextHygiene`) for tool arguments: ids with control characters refused, text cleaned. */
const storableArguments = (args: unknown): Effect.Effect<unknown, ValidationError> => {
  const scanned = scanJson(args)
  return scanned._tag === "Refused"
    ? Effect.fail(ValidationError.single(scanned.field, scanned.message))
    : Effect.succeed(scanned.value)
}

const compile = (tool: McpTool, mode: McpMode) => {
  const takesBankArgument = mode === "multi" && tool.usesBank
  const input = Schema.Struct(takesBankArgument ? { ...tool.fields, bank_id: bankIdArgument } : tool.fields)
  const document = Schema.toJsonSchemaDocument(input, { onExcessProperty: "error" })
  const inputSchema = {
    ...document.schema,
    type: "object",
    properties: withDescriptions(input.fields, document.schema["properties"] ?? {}),
    // Unknown arguments are refused (see rejectUnknown); the generator leaves this out for argument-less tools.
    additionalProperties: false,
    ...(Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions })
  }
  const listing: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputSchema as Tool["inputSchema"],
    annotations: { title: tool.title, ...tool.hints }
  }
  // Tool fields never need services to decode; the generic struct type cannot show it.
  const decode = Schema.decodeUnknownEffect(input as unknown as Schema.Codec<object, unknown>)
  const call = (args: unknown, resolveBank: BankResolver): Effect.Effect<CallToolResult> =>
    rejectUnknown(args ?? {}, input.fields).pipe(
      Effect.flatMap(storableArguments),
      Effect.flatMap((known) => decode(known, parseOptions)),
      Effect.mapError((error) => Schema.isSchemaError(error) ? ValidationError.fromSchemaError(error, "body") : error),
      Effect.flatMap((decoded) => {
        const { bank_id, ...rest } = decoded as { readonly bank_id?: string }
        const bank = takesBankArgument || tool.usesBank ? resolveBank(bank_id) : undefined
        // The bank a call works in, or the one a bank-less tool names (create_bank), must be one the key reaches.
        const named = bank ?? (typeof bank_id === "string" ? bank_id : undefined)
        const run = takesBankArgument ? tool.run(bank!, rest) : tool.run(bank ?? "", decoded)
        return named === undefined ? run : Effect.andThen(requireBank(named), run)
      }),
      Effect.map(success),
      Effect.catch((error) => Effect.succeed(textResult(explain(error, tool.name, mode), true))),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError(`MCP tool ${tool.name} failed`, cause).pipe(
            Effect.as(textResult(`${tool.name} failed with an internal error; the server log has the details`, true))
          )
      ),
      // Under the MCP request's span: one child per tool call, named by the tool (never its arguments).
      Effect.withSpan(`McpTool.${tool.name}`, { attributes: { "mcp.tool.name": tool.name, "engram.mcp.mode": mode } })
    )
  return { listing, call }
}

export const makeToolCatalog = (tools: ReadonlyArray<McpTool>, mode: McpMode): ToolCatalog => {
  const compiled = new Map(
    tools.filter((tool) => mode === "multi" || !tool.multiBankOnly).map((tool) => [tool.name, compile(tool, mode)])
  )
  return {
    tools: [...compiled.values()].map((tool) => tool.listing),
    has: (name) => compiled.has(name),
    call: (name, args, resolveBank) =>
      compiled.get(name)?.call(args, resolveBank) ?? Effect.die(new Error(`unknown tool '${name}'`))
  }
}

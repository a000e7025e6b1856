/**
 * Fuzzed MCP `tools/call` messages derived from each tool's input schema (as `tools/list` shows it): a sample of
 * the tool's arguments — bank and record ids from the target bank, a few from the sentinel — broken by one to
 * three mutations, or arguments of the wrong shape altogether, or a JSON-RPC message that is not one. Also judges
 * the answer: a JSON-RPC error or a tool error result is fine; a 5xx, an internal error or no JSON is not.
 */
import fc from "fast-check"
import { httpProblem } from "./FuzzRun.ts"
import { extraKeys, hostileFor, malformedBodies, serialize, wrongTypes } from "./Hostile.ts"
import type { JsonSchema, Slot } from "./JsonSchemaArbitrary.ts"
import { makeResolver, removeAt, sampleOf, setAt, slotsOf } from "./JsonSchemaArbitrary.ts"

export interface McpToolListing {
  readonly name: string
  readonly inputSchema: JsonSchema
}

export interface McpMessage {
  readonly text: string
  readonly mutations: string
}

export interface McpContext {
  /** Real ids by argument name; `bank_id` holds only the target bank. */
  readonly pools: Record<string, ReadonlyArray<string>>
  readonly sentinel: string
}

/** Bank ids that differ from the sentinel's only by what a careless normaliser would strip. */
const nearMisses = (sentinel: string) => [
  `${sentinel}\u0000`,
  ` ${sentinel}`,
  `${sentinel}\n`,
  `${sentinel}/../${sentinel}`,
  `../${sentinel}`,
  sentinel.toUpperCase(),
  `${sentinel}\ud800`
]

const preview = (value: unknown) => {
  const text = serialize(value)
  return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text
}

const call = (name: unknown, args: unknown) =>
  serialize({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })

/** A sample where every id argument holds a real id (the target's bank, a record of the target or the sentinel). */
const argumentsSample = (tool: McpToolListing, context: McpContext) => {
  const resolve = makeResolver(tool.inputSchema)
  const properties = Object.keys(tool.inputSchema["properties"] ?? {})
  const ids = properties.filter((name) => (context.pools[name] ?? []).length > 0)
  return fc.tuple(
    sampleOf(tool.inputSchema, resolve),
    fc.record(Object.fromEntries(ids.map((name) => [name, fc.constantFrom(...context.pools[name]!)])))
  ).map(([sample, chosen]) => ({ ...(sample as object), ...chosen }))
}

type Mutation = (args: unknown) => { readonly args: unknown; readonly note: string }

const mutationsFor = (tool: McpToolListing, context: McpContext): fc.Arbitrary<Mutation> => {
  const slots: ReadonlyArray<Slot> = slotsOf(tool.inputSchema, makeResolver(tool.inputSchema))
  const options: Array<fc.Arbitrary<Mutation>> = [
    fc.record({ key: fc.constantFrom(...extraKeys), value: hostileFor({}) }).map(
      ({ key, value }) => (args: unknown) => ({
        args: { ...(args as object), [key]: value },
        note: `extra ${preview(key)}=${preview(value)}`
      })
    )
  ]
  if (slots.length > 0) {
    const field = fc.constantFrom(...slots).chain((slot) =>
      hostileFor(slot.schema).map((value): Mutation => (args) => ({
        args: setAt(args, slot.path, value),
        note: `${slot.path.join(".")}=${preview(value)}`
      }))
    )
    // A hostile value in one argument is the mutation most likely to reach the tool: drawn most often.
    options.push(
      field,
      field,
      field,
      fc.constantFrom(...slots).map((slot): Mutation => (args) => ({
        args: removeAt(args, slot.path),
        note: `without ${slot.path.join(".")}`
      }))
    )
  }
  if ("bank_id" in (tool.inputSchema["properties"] ?? {})) {
    options.push(
      fc.constantFrom(...nearMisses(context.sentinel)).map((value): Mutation => (args) => ({
        args: setAt(args, ["bank_id"], value),
        note: `bank_id=${preview(value)}`
      }))
    )
  }
  return fc.oneof(...options)
}

/** Calls of one tool: mutated arguments (most), arguments that are not an object, or a broken message. */
export const toolCallArbitrary = (tool: McpToolListing, context: McpContext): fc.Arbitrary<McpMessage> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(
        argumentsSample(tool, context),
        fc.array(mutationsFor(tool, context), { minLength: 1, maxLength: 3 })
      )
        .map(([sample, mutations]) => {
          let args: unknown = sample
          const notes: Array<string> = []
          for (const mutate of mutations) {
            const next = mutate(args)
            args = next.args
            notes.push(next.note)
          }
          return { text: call(tool.name, args), mutations: notes.join("; ") }
        })
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...wrongTypes).map((args) => ({
        text: call(tool.name, args),
        mutations: `arguments ${preview(args)}`
      }))
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...malformedBodies.map((text) => ({ text, mutations: `message ${preview(text)}` })),
        { text: call(`${tool.name}\u0000`, {}), mutations: "tool name with NUL" },
        { text: call(42, {}), mutations: "tool name 42" },
        {
          text: serialize({ jsonrpc: "2.0", id: {}, method: "tools/call", params: { name: tool.name } }),
          mutations: "id {}"
        },
        {
          text: serialize([{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool.name } }]),
          mutations: "batch"
        }
      )
    }
  )

/**
 * The answer's problem, or `undefined`: a 4xx needs `detail` or a JSON-RPC error; a JSON-RPC internal error
 * (-32603) or a tool result that reports an internal error is a crash seen through the protocol.
 */
export const mcpProblem = (status: number, contentType: string | null, text: string): string | undefined => {
  if (status >= 500) return httpProblem(status, contentType, text)
  if (text === "" && status < 300) return undefined
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return `answered ${status} without JSON (${contentType}): ${text.slice(0, 200)}`
  }
  const messages = Array.isArray(body) ? body : [body]
  if (
    status >= 400 && messages.every((message) => typeof message?.detail !== "string" && message?.error === undefined)
  ) {
    return `answered ${status} with neither \`detail\` nor a JSON-RPC error: ${text.slice(0, 200)}`
  }
  for (const message of messages) {
    if (message?.error?.code === -32603) return `JSON-RPC internal error: ${text.slice(0, 300)}`
    const content = message?.result?.content?.[0]?.text
    if (message?.result?.isError === true && typeof content === "string" && content.includes("internal error")) {
      return `tool internal error: ${content.slice(0, 300)}`
    }
  }
  return undefined
}

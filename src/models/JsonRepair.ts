/**
 * Finds and repairs the JSON value in what a language model answered, for models that do not (or not reliably)
 * honour a response format: reasoning blocks, code fences and prose around the value, JavaScript-ish syntax, and a
 * bare list (or a wrapped object) where the JSON Schema asked for something else. Pure functions; validation
 * against the real Effect Schema happens in the caller, never here.
 */
import { Result } from "effect"

type JsonSchemaNode = { readonly [key: string]: unknown }

/** Tags some models print their reasoning in, before (and sometimes instead of) the answer. */
const reasoningTags = "think|thinking|thought|reasoning|reflection|analysis"
const leadingBlock = new RegExp(`^\\s*<(${reasoningTags})\\b[^>]*>[\\s\\S]*?</\\1\\s*>`, "i")
const leadingUnclosed = new RegExp(`^\\s*<(?:${reasoningTags})\\b[^>]*>`, "i")
const thinkClose = /<\/think(?:ing)?\s*>/gi
const thoughtMarkers = /<\|begin_of_thought\|>[\s\S]*?<\|end_of_thought\|>/g

/**
 * Removes the reasoning a model printed before its answer. Only leading blocks go, so an answer that merely
 * mentions such a tag keeps it. A closing `</think>` without its opening tag (chat templates that put `<think>`
 * in the prompt) drops everything up to it; a leading block that is never closed leaves no answer at all.
 */
export const stripReasoning = (text: string): string => {
  let out = text.replace(thoughtMarkers, "")
  for (let block = out.match(leadingBlock); block !== null; block = out.match(leadingBlock)) {
    out = out.slice(block.index! + block[0].length)
  }
  if (leadingUnclosed.test(out)) return ""
  const closes = [...out.matchAll(thinkClose)]
  if (closes.length > 0 && !/<think(?:ing)?\b/i.test(out)) {
    const last = closes[closes.length - 1]!
    out = out.slice(last.index + last[0].length)
  }
  return out.trim()
}

const fences = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/g

/**
 * The JSON value in a model's answer, reshaped towards `jsonSchema` when given: fenced blocks first, then the
 * whole answer, then every balanced `{…}`/`[…]` span, preferring a candidate of the type the schema asks for.
 * Fails with a sentence the corrective retry can show the model.
 */
export const extractJson = (text: string, jsonSchema?: JsonSchemaNode): Result.Result<unknown, string> => {
  const cleaned = stripReasoning(text)
  if (cleaned === "") return Result.fail("the answer was empty")
  const candidates: Array<unknown> = []
  const consider = (source: string) => {
    const parsed = parseLenient(source)
    if (parsed !== undefined) candidates.push(parsed.value)
  }
  for (const match of cleaned.matchAll(fences)) consider(match[1]!.trim())
  consider(cleaned)
  if (candidates.length === 0) { for (const slice of balancedSlices(cleaned)) consider(slice) }
  if (candidates.length === 0) return Result.fail("the answer contained no JSON value")
  const root = jsonSchema === undefined ? undefined : resolve(jsonSchema, jsonSchema)
  const expected = root === undefined ? undefined : typeOf(root)
  const preferred = candidates.find((candidate) => jsonType(candidate) === expected) ?? candidates[0]
  return Result.succeed(root === undefined ? preferred : coerce(preferred, root, jsonSchema!))
}

/** `JSON.parse`, then the same after normalising JavaScript-ish syntax. `undefined` when neither parses. */
export const parseLenient = (source: string): { readonly value: unknown } | undefined => {
  const attempt = (input: string) => {
    try {
      return { value: JSON.parse(input) as unknown }
    } catch {
      return undefined
    }
  }
  if (source === "") return undefined
  return attempt(source) ?? attempt(normalize(source))
}

/** Every top-level `{…}` or `[…]` span whose brackets balance (strings respected), in order. */
const balancedSlices = (text: string): Array<string> => {
  const slices: Array<string> = []
  let index = 0
  while (index < text.length) {
    const char = text[index]
    if (char === "{" || char === "[") {
      const end = matchingEnd(text, index)
      if (end > index) {
        const slice = text.slice(index, end + 1)
        if (parseLenient(slice) !== undefined) {
          slices.push(slice)
          index = end + 1
          continue
        }
      }
    }
    index++
  }
  return slices
}

const matchingEnd = (text: string, start: number): number => {
  const stack: Array<string> = []
  let quote: string | undefined
  for (let i = start; i < text.length; i++) {
    const char = text[i]!
    if (quote !== undefined) {
      if (char === "\\") i++
      else if (char === quote) quote = undefined
      continue
    }
    if (char === "\"" || char === "'") quote = char
    else if (char === "{") stack.push("}")
    else if (char === "[") stack.push("]")
    else if (char === "}" || char === "]") {
      if (stack.pop() !== char) return -1
      if (stack.length === 0) return i
    }
  }
  return -1
}

const controlEscapes: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * Rewrites JavaScript/Python-flavoured JSON into JSON: single-quoted strings, raw line breaks inside strings,
 * comments, trailing commas, unquoted keys, `True`/`False`/`None`, `NaN`/`Infinity`.
 */
export const normalize = (source: string): string => {
  let out = ""
  let i = 0
  const skipTrivia = (from: number): number => {
    let j = from
    while (j < source.length) {
      if (/\s/.test(source[j]!)) j++
      else if (source.startsWith("//", j)) j = lineEnd(j)
      else if (source.startsWith("/*", j)) j = blockEnd(j)
      else break
    }
    return j
  }
  const lineEnd = (from: number) => {
    const end = source.indexOf("\n", from)
    return end < 0 ? source.length : end
  }
  const blockEnd = (from: number) => {
    const end = source.indexOf("*/", from + 2)
    return end < 0 ? source.length : end + 2
  }
  while (i < source.length) {
    const char = source[i]!
    if (char === "\"" || char === "'") {
      out += "\""
      i++
      while (i < source.length && source[i] !== char) {
        const c = source[i]!
        if (c === "\\" && i + 1 < source.length) {
          const next = source[i + 1]!
          out += next === "'" ? "'" : c + next
          i += 2
          continue
        }
        out += c === "\"" ? "\\\"" : controlEscapes[c] ?? c
        i++
      }
      out += "\""
      i++
    } else if (source.startsWith("//", i)) {
      i = lineEnd(i)
    } else if (source.startsWith("/*", i)) {
      i = blockEnd(i)
    } else if (char === ",") {
      const next = skipTrivia(i + 1)
      if (source[next] !== "}" && source[next] !== "]") out += ","
      i++
    } else if (/[A-Za-z_$]/.test(char)) {
      let end = i
      while (end < source.length && /[\w$]/.test(source[end]!)) end++
      const word = source.slice(i, end)
      const literal = word === "True" ? "true" : word === "False" ? "false" : word === "None" ?
        "null"
        : word === "NaN" || word === "Infinity" || word === "undefined"
        ? "null"
        : word
      out += source[skipTrivia(end)] === ":" && literal === word ? JSON.stringify(word) : literal
      i = end
    } else {
      out += char
      i++
    }
  }
  return out
}

const jsonType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value

const typeOf = (schema: JsonSchemaNode): string | undefined => {
  const type = schema["type"]
  if (typeof type === "string") return type
  if (schema["properties"] !== undefined) return "object"
  if (schema["items"] !== undefined) return "array"
  return undefined
}

/** Follows a local `$ref` (`#/$defs/Name`, `#/definitions/Name`) against the root document. */
const resolve = (node: JsonSchemaNode, root: JsonSchemaNode, depth = 0): JsonSchemaNode => {
  const ref = node["$ref"]
  if (typeof ref !== "string" || !ref.startsWith("#/") || depth > 8) return node
  let target: unknown = root
  for (const segment of ref.slice(2).split("/")) {
    target = typeof target === "object" && target !== null ? (target as JsonSchemaNode)[segment] : undefined
  }
  return typeof target === "object" && target !== null ? resolve(target as JsonSchemaNode, root, depth + 1) : node
}

const isRecord = (value: unknown): value is Record<string, unknown> => jsonType(value) === "object"

/**
 * Reshapes the top level towards what the schema asks for: a bare list becomes the one array property of the
 * object, a single item becomes a one-element list, an object wrapped in one extra key is unwrapped.
 */
const coerce = (value: unknown, schema: JsonSchemaNode, root: JsonSchemaNode): unknown => {
  const expected = typeOf(schema)
  if (expected === "object") {
    const properties = isRecord(schema["properties"]) ? schema["properties"] : {}
    const names = Object.keys(properties)
    const required = Array.isArray(schema["required"]) ? schema["required"].map(String) : names
    const arrayProperties = names.filter((name) =>
      typeOf(resolve(properties[name] as JsonSchemaNode, root)) === "array"
    )
    const onlyArray = arrayProperties.length === 1 ? arrayProperties[0]! : undefined
    if (Array.isArray(value)) return onlyArray === undefined ? value : { [onlyArray]: value }
    if (!isRecord(value)) return value
    const keys = Object.keys(value)
    const knows = (candidate: Record<string, unknown>) => names.some((name) => name in candidate)
    if (!knows(value) && keys.length === 1) {
      const inner = value[keys[0]!]
      if (isRecord(inner) && required.some((name) => name in inner)) return inner
      if (Array.isArray(inner) && onlyArray !== undefined) return { [onlyArray]: inner }
    }
    if (!knows(value) && onlyArray !== undefined && names.length === 1 && keys.length > 0) {
      return { [onlyArray]: [value] }
    }
    return value
  }
  if (expected === "array" && isRecord(value)) {
    const lists = Object.values(value).filter(Array.isArray)
    if (lists.length === 1) return lists[0]
    return [value]
  }
  return value
}

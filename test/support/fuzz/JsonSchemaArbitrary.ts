/**
 * Reads the JSON Schemas the service publishes (OpenAPI components, MCP tool input schemas) for the fuzz tests:
 * well-formed sample values that a request can start from, and the list of places (slots) a mutation can hit.
 * Samples only aim to be valid — the fuzzer breaks them on purpose — so constraints without a cheap generator
 * (formats, most patterns) are approximated.
 */
import fc from "fast-check"

export type JsonSchema = { readonly [key: string]: any }
export type JsonPath = ReadonlyArray<string | number>

/** A place in a request body that a mutation can replace or remove, with the schema that describes it. */
export interface Slot {
  readonly path: JsonPath
  readonly schema: JsonSchema
  readonly required: boolean
}

/** Follows `$ref`s (`#/components/schemas/X`, `#/$defs/X`) inside the document the schema came from. */
export const makeResolver = (root: object) => (schema: JsonSchema | undefined): JsonSchema => {
  let current: any = schema ?? {}
  for (let hops = 0; typeof current?.$ref === "string" && hops < 32; hops++) {
    current = current.$ref.slice(2).split("/").reduce(
      (node: any, key: string) => node?.[key.replaceAll("~1", "/").replaceAll("~0", "~")],
      root
    )
  }
  return current ?? {}
}

export type Resolve = ReturnType<typeof makeResolver>

/** Bounds of a number schema, including those Effect puts in `allOf` (e.g. int32 inside a safe integer). */
const bounds = (schema: JsonSchema): { min: number; max: number } => {
  let min = typeof schema.minimum === "number" ? schema.minimum : -Number.MAX_SAFE_INTEGER
  let max = typeof schema.maximum === "number" ? schema.maximum : Number.MAX_SAFE_INTEGER
  for (const part of schema.allOf ?? []) {
    const inner = bounds(part)
    min = Math.max(min, inner.min)
    max = Math.min(max, inner.max)
  }
  return { min, max }
}

const numericPattern = (pattern: unknown) => typeof pattern === "string" && pattern.includes("\\d")

const benignWords = ["fuzz", "Priya moved to Lisbon", "team:maps", "2024-04-02T10:00:00Z", "tea", "notes"]

const stringSample = (schema: JsonSchema): fc.Arbitrary<string> => {
  if (numericPattern(schema.pattern)) return fc.integer({ min: 1, max: 20 }).map(String)
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 200
  return fc.constantFrom(...benignWords).map((word) =>
    word.padEnd(min, "x").slice(0, Math.max(min, Math.min(max, 200)))
  )
}

/** Non-null branches first: a sample should carry a value, and `null` is one of the mutations anyway. */
const branches = (schema: JsonSchema, resolve: Resolve): ReadonlyArray<JsonSchema> => {
  const all = (schema.anyOf ?? schema.oneOf ?? []).map(resolve) as ReadonlyArray<JsonSchema>
  const present = all.filter((branch) => branch.type !== "null")
  return present.length === 0 ? all : present
}

/** A (mostly) valid value for the schema; `depth` stops recursive schemas such as tag groups. */
export const sampleOf = (raw: JsonSchema | undefined, resolve: Resolve, depth = 0): fc.Arbitrary<unknown> => {
  // Arbitraries are built eagerly: a recursive schema (tag groups) needs a hard stop.
  if (depth > 8) return fc.constant(null)
  const schema = resolve(raw)
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
  if ("const" in schema) return fc.constant(schema.const)
  const options = branches(schema, resolve)
  if (options.length > 0) return fc.oneof(...options.map((branch) => sampleOf(branch, resolve, depth + 1)))
  switch (schema.type) {
    case "string":
      return stringSample(schema)
    case "integer": {
      const { min, max } = bounds(schema)
      return fc.integer({ min: Math.max(min, -1000), max: Math.max(Math.min(max, 1000), Math.max(min, -1000)) })
    }
    case "number": {
      const { min, max } = bounds(schema)
      const low = Math.max(min, -1000)
      return fc.double({ min: low, max: Math.max(Math.min(max, 1000), low), noNaN: true, noDefaultInfinity: true })
    }
    case "boolean":
      return fc.boolean()
    case "array": {
      const minLength = schema.minItems ?? 0
      if (depth > 4) return fc.constant([])
      return fc.array(sampleOf(schema.items, resolve, depth + 1), { minLength, maxLength: Math.max(minLength, 2) })
    }
    case "object":
      return objectSample(schema, resolve, depth)
    default:
      return fc.constant("fuzz")
  }
}

const objectSample = (schema: JsonSchema, resolve: Resolve, depth: number): fc.Arbitrary<unknown> => {
  const properties = Object.entries(schema.properties ?? {}) as Array<[string, JsonSchema]>
  if (properties.length === 0) {
    const values = typeof schema.additionalProperties === "object" ? schema.additionalProperties : { type: "string" }
    return depth > 4
      ? fc.constant({})
      : fc.dictionary(fc.constantFrom("source", "topic"), sampleOf(values, resolve, depth + 1), { maxKeys: 2 })
  }
  const required = properties.filter(([name]) => (schema.required ?? []).includes(name))
  // At most two optional properties: each sample is then rarely invalid by accident, so mutations reach handlers.
  // Past the depth limit only required properties are filled, so recursive schemas still terminate.
  const optional = depth > 4 ? [] : properties.filter(([name]) => !(schema.required ?? []).includes(name))
  return fc.subarray(optional, { maxLength: Math.min(2, optional.length) }).chain((chosen) =>
    fc.record(Object.fromEntries(
      [...required, ...chosen].map(([name, property]) => [name, sampleOf(property, resolve, depth + 1)])
    ))
  )
}

/** Every property reachable in the schema (arrays through their first item), down to a fixed depth. */
export const slotsOf = (raw: JsonSchema | undefined, resolve: Resolve): ReadonlyArray<Slot> => {
  const slots: Array<Slot> = []
  const walk = (schema: JsonSchema, path: JsonPath, depth: number) => {
    if (depth > 4) return
    for (const branch of branches(schema, resolve)) walk(branch, path, depth + 1)
    if (schema.type === "array" && schema.items !== undefined) walk(resolve(schema.items), [...path, 0], depth + 1)
    const required = new Set<string>(schema.required ?? [])
    for (const [name, property] of Object.entries(schema.properties ?? {}) as Array<[string, JsonSchema]>) {
      const resolved = resolve(property)
      slots.push({ path: [...path, name], schema: resolved, required: required.has(name) })
      walk(resolved, [...path, name], depth + 1)
    }
  }
  walk(resolve(raw), [], 0)
  return slots
}

/** A copy of `value` with `replacement` at `path`, creating the objects and arrays on the way. */
export const setAt = (value: unknown, path: JsonPath, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (typeof head === "number") {
    const array = Array.isArray(value) ? [...value] : []
    array[Math.min(head, array.length)] = setAt(array[head], rest, replacement)
    return array
  }
  const object = typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  return { ...object, [head as string]: setAt((object as any)[head as string], rest, replacement) }
}

/** A copy of `value` without the property at `path` (unchanged when the path does not exist). */
export const removeAt = (value: unknown, path: JsonPath): unknown => {
  if (path.length === 0 || typeof value !== "object" || value === null) return value
  const [head, ...rest] = path
  if (rest.length === 0) {
    if (Array.isArray(value)) return value.filter((_, index) => index !== head)
    const { [head as string]: _removed, ...others } = value as Record<string, unknown>
    return others
  }
  const copy: any = Array.isArray(value) ? [...value] : { ...value }
  copy[head as any] = removeAt(copy[head as any], rest)
  return copy
}

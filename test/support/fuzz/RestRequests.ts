/**
 * Fuzzed REST requests derived from the OpenAPI document: for each operation, a well-formed sample (path ids of
 * real records, query values and a body from the schemas) broken by one to three mutations — a hostile path
 * segment or query value, a hostile value in one body field, a missing required field, an extra field, a
 * malformed or truncated body, invalid UTF-8, a wrong content type. Every route the document lists is covered
 * without naming any route here.
 */
import fc from "fast-check"
import type { JsonSchema, Resolve, Slot } from "./JsonSchemaArbitrary.ts"
import { removeAt, sampleOf, setAt, slotsOf } from "./JsonSchemaArbitrary.ts"
import {
  extraKeys,
  hostileContentTypes,
  hostileFor,
  hostileQueryValues,
  hostileSegments,
  hostileStrings,
  malformedBodies,
  serialize
} from "./Hostile.ts"

export interface Route {
  readonly method: string
  readonly template: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<
    { readonly name: string; readonly schema: JsonSchema; readonly required: boolean }
  >
  readonly body: { readonly mediaType: string; readonly schema: JsonSchema } | undefined
}

/** Every operation of the OpenAPI document. */
export const routesOf = (document: any): ReadonlyArray<Route> =>
  Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const parameters = (operation.parameters ?? []) as Array<any>
      const [mediaType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? []
      return {
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name as string),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => ({
          name: p.name as string,
          schema: p.schema ?? {},
          required: p.required === true
        })),
        body: mediaType === undefined ? undefined : { mediaType, schema: (content as any).schema ?? {} }
      }
    })
  )

/** What goes on the wire, and a short account of how it was broken (for the failure report). */
export interface WireRequest {
  readonly method: string
  readonly path: string
  readonly contentType: string | undefined
  readonly body: Uint8Array | undefined
  readonly mutations: string
}

type Mutation =
  | { readonly kind: "segment"; readonly param: string; readonly value: string }
  | { readonly kind: "query"; readonly name: string; readonly value: string }
  | { readonly kind: "field"; readonly slot: Slot; readonly value: unknown }
  | { readonly kind: "missing"; readonly slot: Slot }
  | { readonly kind: "extra"; readonly key: string; readonly value: unknown }
  | { readonly kind: "filename"; readonly value: string }
  | { readonly kind: "whole"; readonly text: string }
  | { readonly kind: "invalid-utf8" }
  | { readonly kind: "truncated" }
  | { readonly kind: "content-type"; readonly value: string | undefined }

export interface RequestContext {
  readonly resolve: Resolve
  /** Real ids by parameter name; `bank_id` holds only the target bank. */
  readonly pools: Record<string, ReadonlyArray<string>>
  /** The bank that must never be reached: near-miss variants of its id are among the hostile segments. */
  readonly sentinel: string
}

const boundary = "engram-fuzz-boundary"
const multipart = "multipart/form-data"
const isMultipart = (route: Route) => route.body?.mediaType.startsWith(multipart) === true

const preview = (value: unknown) => {
  const text = typeof value === "string" ? JSON.stringify(value) : serialize(value)
  return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text
}

const describeMutation = (mutation: Mutation): string => {
  switch (mutation.kind) {
    case "segment":
      return `path ${mutation.param}=${preview(mutation.value)}`
    case "query":
      return `query ${mutation.name}=${preview(mutation.value)}`
    case "field":
      return `body ${mutation.slot.path.join(".")}=${preview(mutation.value)}`
    case "missing":
      return `body without ${mutation.slot.path.join(".")}`
    case "extra":
      return `body extra ${preview(mutation.key)}=${preview(mutation.value)}`
    case "filename":
      return `file name ${preview(mutation.value)}`
    case "whole":
      return `body ${preview(mutation.text)}`
    case "content-type":
      return `content-type ${mutation.value ?? "(none)"}`
    default:
      return mutation.kind
  }
}

/** A file part per element of `files`, a text part per other field; `filename` names every file. */
const encodeMultipart = (body: unknown, filename: string): string => {
  const parts = Object.entries(typeof body === "object" && body !== null ? body : { request: body }).flatMap(
    ([name, value]) =>
      name === "files" && Array.isArray(value)
        ? value.map((file) =>
          `Content-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n` +
          (typeof file === "string" ? file : serialize(file))
        )
        : [
          `Content-Disposition: form-data; name="${name}"\r\n\r\n${
            typeof value === "string" ? value : serialize(value)
          }`
        ]
  )
  return parts.map((part) => `--${boundary}\r\n${part}\r\n`).join("") + `--${boundary}--\r\n`
}

const segmentSample = (param: string, context: RequestContext): fc.Arbitrary<string> => {
  const pool = context.pools[param] ?? []
  return pool.length === 0 ? fc.uuid() : fc.constantFrom(...pool.map(encodeURIComponent))
}

const querySample = (schema: JsonSchema, context: RequestContext): fc.Arbitrary<string> =>
  sampleOf(schema, context.resolve).map((value) =>
    (Array.isArray(value) ? value : [value]).map((item) => encodeURIComponent(String(item))).join(",")
  )

const mutationsFor = (route: Route, slots: ReadonlyArray<Slot>, context: RequestContext) => {
  const options: Array<fc.Arbitrary<Mutation>> = []
  for (const param of route.pathParams) {
    options.push(
      fc.constantFrom(...hostileSegments(context.sentinel)).map((value): Mutation => ({
        kind: "segment",
        param,
        value
      }))
    )
  }
  const queryNames = [...route.queryParams.map((q) => q.name), "unknown_parameter"]
  options.push(fc.record({
    kind: fc.constant("query" as const),
    name: fc.constantFrom(...queryNames),
    value: fc.constantFrom(...hostileQueryValues)
  }))
  if (route.method !== "GET" && route.method !== "HEAD") {
    options.push(fc.constantFrom(...malformedBodies).map((text): Mutation => ({ kind: "whole", text })))
    options.push(fc.constantFrom(...hostileContentTypes).map((value): Mutation => ({ kind: "content-type", value })))
  }
  if (route.body !== undefined) {
    options.push(fc.constantFrom({ kind: "invalid-utf8" } as const, { kind: "truncated" } as const))
    options.push(
      fc.record({ kind: fc.constant("extra" as const), key: fc.constantFrom(...extraKeys), value: hostileFor({}) })
    )
    if (slots.length > 0) {
      const slot = fc.constantFrom(...slots)
      const field = slot.chain((s) => hostileFor(s.schema).map((value) => ({ kind: "field" as const, slot: s, value })))
      // A hostile value in one field is the mutation most likely to get past validation: drawn most often.
      options.push(field, field, field)
      const required = slots.filter((s) => s.required)
      options.push(
        fc.constantFrom(...(required.length > 0 ? required : slots)).map((s): Mutation => ({
          kind: "missing",
          slot: s
        }))
      )
    }
    if (isMultipart(route)) {
      options.push(
        fc.constantFrom(...hostileStrings.slice(0, 14)).map((value): Mutation => ({ kind: "filename", value }))
      )
    }
  }
  return fc.oneof(...options)
}

/** Replaces the first string value's opening bytes with bytes that are not UTF-8 (or prefixes them). */
const withInvalidUtf8 = (text: string): Uint8Array => {
  const bytes = Buffer.from(text, "utf8")
  const at = text.indexOf(`":"`)
  const offset = at < 0 ? 0 : Buffer.byteLength(text.slice(0, at + 3), "utf8")
  return Buffer.concat([
    bytes.subarray(0, offset),
    Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
    bytes.subarray(offset)
  ])
}

const build = (
  route: Route,
  sample: { segments: Record<string, string>; query: Record<string, string>; body: unknown },
  mutations: ReadonlyArray<Mutation>
): WireRequest => {
  const segments = { ...sample.segments }
  const query: Array<[string, string]> = Object.entries(sample.query)
  let body = sample.body
  let contentType = route.body === undefined
    ? undefined
    : isMultipart(route)
    ? `${multipart}; boundary=${boundary}`
    : "application/json"
  let filename = "notes.txt"
  let rawText: string | undefined
  let invalidUtf8 = false
  let truncated = false
  for (const mutation of mutations) {
    switch (mutation.kind) {
      case "segment":
        segments[mutation.param] = mutation.value
        break
      case "query":
        query.push([mutation.name, mutation.value])
        break
      case "field":
        body = setAt(body, mutation.slot.path, mutation.value)
        break
      case "missing":
        body = removeAt(body, mutation.slot.path)
        break
      case "extra":
        body = { ...(typeof body === "object" && body !== null ? body : {}), [mutation.key]: mutation.value }
        break
      case "filename":
        filename = mutation.value
        break
      case "whole":
        rawText = mutation.text
        contentType ??= "application/json"
        break
      case "invalid-utf8":
        invalidUtf8 = true
        break
      case "truncated":
        truncated = true
        break
      case "content-type":
        contentType = mutation.value
        break
    }
  }
  const path = route.template.replace(/\{(\w+)\}/g, (_, name: string) => segments[name] ?? "x")
  const search = query.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join("&")
  let text = rawText ??
    (body === undefined ? undefined : isMultipart(route) ? encodeMultipart(body, filename) : serialize(body))
  if (text !== undefined && truncated) text = text.slice(0, Math.floor(text.length / 2))
  const bytes = text === undefined ? undefined : invalidUtf8 ? withInvalidUtf8(text) : Buffer.from(text, "utf8")
  const withoutBody = route.method === "GET" || route.method === "HEAD"
  return {
    method: route.method,
    path: search === "" ? path : `${path}?${search}`,
    contentType: withoutBody ? undefined : contentType,
    body: withoutBody ? undefined : bytes,
    mutations: mutations.map(describeMutation).join("; ")
  }
}

/** A sample body; a multipart text field that carries JSON (the file retain `request`) starts as `{}`. */
const bodySample = (body: NonNullable<Route["body"]>, context: RequestContext): fc.Arbitrary<unknown> => {
  const sample = sampleOf(body.schema, context.resolve)
  if (!body.mediaType.startsWith(multipart)) return sample
  const properties = Object.entries(context.resolve(body.schema)["properties"] ?? {}) as Array<[string, JsonSchema]>
  const jsonFields = properties.filter(([, property]) => String(property["description"] ?? "").includes("JSON"))
  return sample.map((value) => ({
    ...(value as object),
    ...Object.fromEntries(jsonFields.map(([name]) => [name, "{}"]))
  }))
}

/** Fuzzed requests for one route: a sample with its required parts, broken by one to three mutations. */
export const requestArbitrary = (route: Route, context: RequestContext): fc.Arbitrary<WireRequest> => {
  const slots = route.body === undefined ? [] : slotsOf(route.body.schema, context.resolve)
  const required = route.queryParams.filter((q) => q.required).map((q) => q.name)
  const sample = fc.record({
    segments: fc.record(Object.fromEntries(route.pathParams.map((param) => [param, segmentSample(param, context)]))),
    query: fc.record(
      Object.fromEntries(route.queryParams.map((q) => [q.name, querySample(q.schema, context)])),
      { requiredKeys: required }
    ),
    body: route.body === undefined ? fc.constant(undefined) : bodySample(route.body, context)
  })
  return fc.tuple(sample, fc.array(mutationsFor(route, slots, context), { minLength: 1, maxLength: 3 })).map(
    ([parts, mutations]) => build(route, parts as any, mutations)
  )
}

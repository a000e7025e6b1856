/**
 * Text hygiene at the edge: one rule for every route, REST and MCP alike, applied before a handler sees the request.
 *
 * - Text is cleaned of what PostgreSQL cannot store: NUL characters are removed and lone UTF-16 surrogates (which have
 *   no UTF-8 form) become U+FFFD, in every string and key of a JSON body and in query values. Text extracted from
 *   PDFs often carries NULs; refusing it would refuse the document for an invisible character.
 * - Identifiers are refused instead (400 naming the field): path parameters, and body or query fields named `id` or
 *   ending in `_id` or `_ids`, that carry a control character or a lone surrogate. Cleaning an id would silently
 *   read or write another record than the one named.
 * - A body that is not valid UTF-8 is refused (400) rather than having its bytes replaced.
 * MCP tool arguments follow the same rules in `mcp/ToolCatalog`; a file upload's `request` field in its handler, and
 * text converted from files in `files/FileConverter`.
 */
import { Effect, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isIdentifierKey, isUnfitIdentifier, refusal, scanJson, storableText } from "../domain/StorableText.ts"

/** A JSON body can only carry a NUL, a lone surrogate or a control character through a `\` escape. */
const escapeThatMayNeedCleaning = /\\(u00[01][0-9a-f]|u007f|ud[89a-f][0-9a-f]{2}|[bfnrt])/i

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const badRequest = (field: string, location: "path" | "query" | "body", message: string) =>
  HttpServerResponse.jsonUnsafe({ detail: `${field}: ${message}`, errors: [{ field, location, message }] }, {
    status: 400
  })

const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) => {
  const type = request.headers["content-type"]
  return type === undefined || /^\s*(application\/([\w.+-]*\+)?json|text\/)/i.test(type)
}

/**
 * The middleware. `routeOf` names the route template a path matched ("/v1/default/banks/{bank_id}"), so a refused
 * path segment is reported under its parameter's name.
 */
export const textHygieneMiddleware = (routeOf: (method: string, url: string) => string) =>
  HttpRouter.middleware((httpEffect) =>
    Effect.gen(function*() {
      let request = yield* HttpServerRequest.HttpServerRequest
      const [path, search = ""] = splitUrl(request.url)

      const segments = path.split("/").map((raw) => ({ raw, decoded: decodedSegment(raw) }))
      // The router cannot match a segment that is not valid percent-encoding; a stand-in finds the parameter's name.
      const routable = segments.map((segment) => segment.decoded === undefined ? "-" : segment.raw).join("/")
      const route = routeOf(request.method, routable)
      const pathProblem = checkPath(segments, route)
      if (pathProblem !== undefined) return badRequest(pathProblem.field, "path", pathProblem.message)

      if (search !== "") {
        const query = cleanQuery(search)
        if (query._tag === "Refused") return badRequest(query.field, "query", query.message)
        if (query.search !== search) request = request.modify({ url: `${path}?${query.search}` })
      }

      const body = yield* applyToBody(request, route)
      if (HttpServerResponse.isHttpServerResponse(body)) return body
      return yield* Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, body)
    }), { global: true })

/** The body rules: a 400 response, or the request with its body read (and cleaned when it needed it). */
const applyToBody = (request: HttpServerRequest.HttpServerRequest, route: string) =>
  Effect.gen(function*() {
    if (!hasJsonBody(request) || request.method === "GET" || request.method === "HEAD") return request
    // A body that cannot be read (too large, aborted) is left to the route, which reports it as it always has.
    const bytes = yield* Effect.option(request.arrayBuffer)
    if (bytes._tag === "None" || bytes.value.byteLength === 0) return request
    let text: string
    try {
      text = strictUtf8.decode(bytes.value)
    } catch {
      return badRequest("body", "body", "is not valid UTF-8")
    }
    // MCP bodies are JSON-RPC envelopes: the tool catalog applies these rules to each call's arguments and answers a
    // refusal as a tool error the assistant can read, not as an HTTP status.
    if (route.startsWith("/mcp/") || !escapeThatMayNeedCleaning.test(text)) {
      return withBody(request, new Uint8Array(bytes.value), text)
    }
    const cleaned = cleanBody(text)
    if (cleaned._tag === "Refused") return badRequest(cleaned.field, "body", cleaned.message)
    return cleaned.text === text
      ? withBody(request, new Uint8Array(bytes.value), text)
      : withBody(request, new TextEncoder().encode(cleaned.text), cleaned.text)
  })

const splitUrl = (url: string): [string, string?] => {
  const question = url.indexOf("?")
  return question < 0 ? [url] : [url.slice(0, question), url.slice(question + 1)]
}

/** A path segment decoded, or `undefined` when it is not valid percent-encoded UTF-8. */
const decodedSegment = (raw: string): string | undefined => {
  if (!raw.includes("%")) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/** Each decoded path segment against the template's segments: `{name}` segments are identifiers. */
const checkPath = (
  segments: ReadonlyArray<{ readonly raw: string; readonly decoded: string | undefined }>,
  template: string
): { field: string; message: string } | undefined => {
  const names = template === "unmatched" ? [] : template.split("/")
  for (const [index, { raw, decoded }] of segments.entries()) {
    // Without an escape a segment cannot carry a control character: the HTTP parser refuses raw ones.
    if (!raw.includes("%")) continue
    const name = names[index]?.match(/^\{(.+)\}$/)?.[1] ?? "path"
    if (decoded === undefined) return { field: name, message: "is not valid percent-encoded UTF-8" }
    if (isUnfitIdentifier(decoded)) return { field: name, message: refusal }
  }
  return undefined
}

type Cleaned =
  | { readonly _tag: "Clean"; readonly search: string }
  | { readonly _tag: "Refused"; readonly field: string; readonly message: string }

const cleanQuery = (search: string): Cleaned => {
  const params = new URLSearchParams(search)
  const cleaned = new URLSearchParams()
  let changed = false
  for (const [key, value] of params) {
    if (isIdentifierKey(key) && isUnfitIdentifier(value)) return { _tag: "Refused", field: key, message: refusal }
    const storableKey = storableText(key)
    const storable = storableText(value)
    changed ||= storable !== value || storableKey !== key
    cleaned.append(storableKey, storable)
  }
  return { _tag: "Clean", search: changed ? cleaned.toString() : search }
}

const cleanBody = (text: string) => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // Not JSON: the route's own decoding answers for it.
    return { _tag: "Clean" as const, text }
  }
  const scanned = scanJson(parsed)
  if (scanned._tag === "Refused") return scanned
  return { _tag: "Clean" as const, text: scanned.changed ? JSON.stringify(scanned.value) : text }
}

/**
 * The same request with its body already read: routes that read the body as text or JSON get `text` (cleaned), and
 * routes that stream it (MCP converts the request to a web `Request`) get the bytes read, which the underlying socket
 * no longer has. Everything else is shared with the original through the prototype.
 */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  bytes: Uint8Array<ArrayBuffer>,
  text: string
): HttpServerRequest.HttpServerRequest => {
  const copy = Object.create(request) as HttpServerRequest.HttpServerRequest
  Object.defineProperties(copy, {
    text: { get: () => Effect.succeed(text) },
    textUnsafe: { get: () => text },
    json: { get: () => Effect.sync(() => JSON.parse(text) as unknown) },
    jsonUnsafe: { get: () => JSON.parse(text) as unknown },
    arrayBuffer: { get: () => Effect.succeed(bytes.buffer) },
    stream: { get: () => Stream.succeed(bytes) },
    modify: { value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
      withBody(request.modify(options), bytes, text) }
  })
  return copy
}

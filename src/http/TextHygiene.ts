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
 * - Caps come first, while the body arrives: a declared length over SERVICE_API_MAX_REQUEST_BYTES is refused (413)
 *   before a byte is read; a JSON body is scanned chunk by chunk (`domain/JsonShape`) and refused as soon as it
 *   passes the byte cap (413), SERVICE_API_MAX_BODY_ELEMENTS (413) or SERVICE_API_MAX_BODY_DEPTH (400). Nothing here
 *   parses the body: strings that need cleaning are rewritten in its text (`cleanJsonText`), so the route's decoding
 *   is the one parse, and a body within the caps costs a parse of at most that many elements.
 * MCP tool arguments follow the same rules in `mcp/ToolCatalog`; a file upload's `request` field in its handler, and
 * text converted from files in `files/FileConverter`.
 */
import { Effect, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { EngramConfig } from "../config/EngramConfig.ts"
import { type JsonLimits, JsonShapeScanner, shapeMessage } from "../domain/JsonShape.ts"
import { collectBody } from "./BodyBytes.ts"
import { cleanJsonText, isIdentifierKey, isUnfitIdentifier, refusal, storableText } from "../domain/StorableText.ts"

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const badRequest = (field: string, location: "path" | "query" | "body", message: string, status = 400) =>
  HttpServerResponse.jsonUnsafe({ detail: `${field}: ${message}`, errors: [{ field, location, message }] }, {
    status,
    // A body refused before it was read to its end: the connection cannot carry another request.
    ...(status === 413 ? { headers: { connection: "close" } } : {})
  })

const tooLarge = (maxBytes: number) =>
  badRequest("body", "body", `is larger than ${maxBytes} bytes (SERVICE_API_MAX_REQUEST_BYTES)`, 413)

const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) => {
  const type = request.headers["content-type"]
  return type === undefined || /^\s*(application\/([\w.+-]*\+)?json|text\/)/i.test(type)
}

/**
 * The middleware. `routeOf` names the route template a path matched ("/v1/default/banks/{bank_id}"), so a refused
 * path segment is reported under its parameter's name.
 */
export const textHygieneMiddleware = (routeOf: (method: string, url: string) => string) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const caps: BodyCaps = {
        maxBytes: config.maxRequestBytes,
        limits: { maxDepth: config.maxBodyDepth, maxElements: config.maxBodyElements }
      }
      return (httpEffect) =>
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

          const body = yield* applyToBody(request, route, caps)
          if (HttpServerResponse.isHttpServerResponse(body)) return body
          return yield* Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, body)
        })
    }),
    { global: true }
  )

interface BodyCaps {
  readonly maxBytes: number
  readonly limits: JsonLimits
}

/** The body rules: a 4xx response, or the request with its body read (and cleaned when it needed it). */
const applyToBody = (request: HttpServerRequest.HttpServerRequest, route: string, caps: BodyCaps) =>
  Effect.gen(function*() {
    // Whatever the content type: a declared length over the cap is refused unread (Node discards what follows).
    if (Number(request.headers["content-length"]) > caps.maxBytes) return tooLarge(caps.maxBytes)
    if (request.method === "GET" || request.method === "HEAD") return request
    const raw = isRawBytes(request)
    if (!raw && !hasJsonBody(request)) return request
    const scanner = raw ? undefined : new JsonShapeScanner(caps.limits)
    const read = yield* readCapped(request, caps.maxBytes, scanner)
    if (read._tag === "Unreadable") return badRequest("body", "body", "could not be read")
    if (read._tag === "TooLarge") return tooLarge(caps.maxBytes)
    if (scanner === undefined) return withBody(request, read.bytes)
    const problem = scanner.problem
    if (problem !== undefined) {
      const setting = problem._tag === "TooDeep" ? "SERVICE_API_MAX_BODY_DEPTH" : "SERVICE_API_MAX_BODY_ELEMENTS"
      return badRequest("body", "body", `${shapeMessage(problem)} (${setting})`, problem._tag === "TooDeep" ? 400 : 413)
    }
    let text: string
    try {
      text = strictUtf8.decode(read.bytes)
    } catch {
      return badRequest("body", "body", "is not valid UTF-8")
    }
    // MCP bodies are JSON-RPC envelopes: the tool catalog applies these rules to each call's arguments and answers a
    // refusal as a tool error the assistant can read, not as an HTTP status.
    if (route.startsWith("/mcp/") || !scanner.mayNeedCleaning) return withBody(request, read.bytes, text)
    const cleaned = cleanJsonText(text)
    if (cleaned._tag === "Refused") return badRequest(cleaned.field, "body", cleaned.message)
    return cleaned._tag === "Clean" && cleaned.changed
      ? withBody(request, new TextEncoder().encode(cleaned.text), cleaned.text)
      : withBody(request, read.bytes, text)
  })

type Read =
  | { readonly _tag: "Read"; readonly bytes: Uint8Array<ArrayBuffer> }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Unreadable" }

const declaredLength = (request: HttpServerRequest.HttpServerRequest) => {
  const header = request.headers["content-length"]
  return header === undefined ? undefined : Number(header)
}

/**
 * A raw binary body (a `.brain` import), read here rather than by the platform, whose one `Buffer.concat` of a large
 * body held the event loop (`BodyBytes.ts`).
 */
const isRawBytes = (request: HttpServerRequest.HttpServerRequest) =>
  /^\s*application\/octet-stream\s*(;|$)/i.test(request.headers["content-type"] ?? "")

/**
 * Reads the body up to `maxBytes`, a JSON body through `scanner` chunk by chunk as it arrives, so a hostile body
 * costs a few microseconds per chunk rather than one long pass once it is all in. Reading stops at the first chunk
 * past a cap: the refusal goes out with the rest unread, and the platform closes the connection after at most 256 KiB
 * more (`unread-bodies.test.ts`). Reading the rest to keep the connection cost the server the whole body (25 MB of
 * socket data per hostile wide request in the isolation bench, 5–8 MB now); a client still sending may see the
 * connection end after its answer. A body the scanner refused comes back empty.
 *
 * A scanned body is kept as chunks and joined in slices at the end: a buffer of the declared length made before the
 * scanner has seen the whole body costs a hostile client nothing (25 MB declared, refused at its millionth element)
 * and the server a large allocation each time (B's recall 0.6 -> 2.2 x quiet under four such clients). A raw body
 * goes into a buffer of its declared length as it arrives.
 */
const readCapped = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number,
  scanner: JsonShapeScanner | undefined
): Effect.Effect<Read> => {
  const body = collectBody(scanner === undefined ? declaredLength(request) : undefined)
  let bytes = 0
  return Stream.runForEachWhile(request.stream, (chunk) =>
    Effect.sync(() => {
      bytes += chunk.length
      if (bytes > maxBytes) return false
      if (scanner !== undefined && scanner.push(chunk) !== undefined) return false
      body.push(chunk)
      return true
    })).pipe(
      Effect.flatMap((): Effect.Effect<Read> =>
        bytes > maxBytes
          ? Effect.succeed({ _tag: "TooLarge" })
          : scanner?.problem !== undefined
          ? Effect.succeed({ _tag: "Read", bytes: new Uint8Array(0) })
          : Effect.map(body.finish, (bytes) => ({ _tag: "Read", bytes }))
      ),
      Effect.orElseSucceed((): Read => ({ _tag: "Unreadable" }))
    )
}

const splitUrl = (url: string): [string, string?] => {
  const question = url.indexOf("?")
  return question < 0 ? [url] : [url.slice(0, question), url.slice(question + 1)]
}

/** A path segment decoded, or `undefined` when it is not valid percent-encoded UTF-8. */
export const decodedSegment = (raw: string): string | undefined => {
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

/**
 * The same request with its body already read: routes that read the body as text or JSON get `text` (cleaned), and
 * routes that stream it (MCP converts the request to a web `Request`) get the bytes read, which the underlying socket
 * no longer has. Everything else is shared with the original through the prototype.
 */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  bytes: Uint8Array<ArrayBuffer>,
  knownText?: string
): HttpServerRequest.HttpServerRequest => {
  // A binary body is decoded as text only if a route asks for it.
  let decoded = knownText
  const text = () => (decoded ??= new TextDecoder().decode(bytes))
  const copy = Object.create(request) as HttpServerRequest.HttpServerRequest
  Object.defineProperties(copy, {
    text: { get: () => Effect.sync(text) },
    textUnsafe: { get: text },
    json: { get: () => Effect.sync(() => JSON.parse(text()) as unknown) },
    jsonUnsafe: { get: () => JSON.parse(text()) as unknown },
    arrayBuffer: { get: () => Effect.succeed(bytes.buffer) },
    stream: { get: () => Stream.succeed(bytes) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
        withBody(request.modify(options), bytes, decoded)
    }
  })
  return copy
}

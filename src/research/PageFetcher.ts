/**
 * Reads one web page for research, within limits: a time limit for the whole fetch, a byte limit on the body
 * (the rest is never downloaded), at most five redirects each checked by the network guard, and only content
 * that reads as text (HTML, XHTML, plain text, markdown, PDF). HTML and PDF are converted to markdown on the
 * document workers, off the server's event loop. It never fails: an unreadable page is a `PageFailure` the
 * answer can do without.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect } from "effect"
import type { HttpClientError } from "effect/http"
import { HttpClient, HttpClientRequest } from "effect/http"
import { FileConverter } from "../files/FileConverter.ts"
import { truncatedBytes } from "../net/CappedBody.ts"
import { destinationDenied } from "../net/GuardedLookup.ts"
import { refusal, researchLookup } from "./NetworkGuard.ts"
import type { ResearchSettings } from "./ResearchSettings.ts"

export interface FetchedPage {
  readonly _tag: "FetchedPage"
  readonly url: string
  /** Where the page was finally read from, after redirects. */
  readonly finalUrl: string
  readonly contentType: string
  readonly bytes: number
  readonly truncated: boolean
  readonly text: string
}

export interface PageFailure {
  readonly _tag: "PageFailure"
  readonly url: string
  readonly reason: string
}

export type PageOutcome = FetchedPage | PageFailure

const maxRedirects = 5
const readableTypes = [
  "text/html",
  "application/xhtml+xml",
  "text/plain",
  "text/markdown",
  "text/x-markdown",
  "application/pdf"
]

const userAgent = "engram-research/1.0 (answers questions from public web pages)"

const filenameFor = (contentType: string) =>
  contentType.includes("pdf") ? "page.pdf" : contentType.includes("html") ?
    "page.html"
    : contentType.includes("markdown")
    ? "page.md"
    : "page.txt"

interface Download {
  readonly finalUrl: string
  readonly contentType: string
  readonly bytes: Uint8Array
  readonly truncated: boolean
}

/**
 * The client pages are read with: its own node:http agents, which never follow redirects and, unless private
 * networks are allowed, connect only to public addresses. `refusal` checks a name first (for a clear reason), but
 * the fetch resolves it again; this check is on the address the socket actually uses (no DNS rebinding).
 */
export const pageClient = (settings: ResearchSettings) =>
  NodeHttpClient.makeAgent(settings.allowPrivateNetworks ? {} : { lookup: researchLookup }).pipe(
    Effect.flatMap((agent) => NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agent)))
  )

/** The guard's reason when it refused the connection, else a generic one. */
const connectFailure = (error: HttpClientError.HttpClientError, host: string) => {
  const cause = error.reason._tag === "TransportError" ? error.reason.cause : undefined
  return cause instanceof Error && (cause as NodeJS.ErrnoException).code === destinationDenied
    ? cause.message
    : `could not connect to ${host}`
}

/** The network part, under the fetch time limit: redirects, each hop checked, then the body up to the byte limit. */
const download = (settings: ResearchSettings, url: string): Effect.Effect<Download | string> =>
  Effect.gen(function*() {
    const client = yield* pageClient(settings)
    let current = URL.parse(url)
    if (current === null) return "not a valid URL"
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const refused = yield* refusal(current, settings.allowPrivateNetworks)
      if (refused !== undefined) return refused
      const response = yield* client.execute(
        HttpClientRequest.get(current.toString()).pipe(HttpClientRequest.setHeaders({
          "user-agent": userAgent,
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/pdf;q=0.8"
        }))
      ).pipe(
        // Redirects are followed here, one checked hop at a time, never by the client behind the guard's back.
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.result
      )
      if (response._tag === "Failure") return connectFailure(response.failure, current.host)
      const page = response.success
      const location = page.headers["location"]
      if (page.status >= 300 && page.status < 400 && location !== undefined) {
        current = URL.parse(location, current.toString())
        if (current === null) return "redirected to an invalid URL"
        continue
      }
      if (page.status < 200 || page.status >= 300) return `HTTP ${page.status}`
      const contentType = (page.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
      if (contentType !== "" && !readableTypes.includes(contentType)) return `${contentType} is not read`
      const body = yield* truncatedBytes(page.stream, settings.maxPageBytes).pipe(Effect.result)
      if (body._tag === "Failure") return "the connection closed while the page was read"
      return { finalUrl: current.toString(), contentType, ...body.success }
    }
    return `more than ${maxRedirects} redirects`
  }).pipe(
    // The agents (and their sockets) live for this one page: closed once the body is read or the time is up.
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: settings.fetchTimeout,
      orElse: () => Effect.succeed(`no answer within ${Duration.format(settings.fetchTimeout)}`)
    })
  )

/**
 * Downloads the page within the fetch limits, then converts it (the conversion has the document workers' own
 * time limit: a cold worker start must not count against the page's network time).
 */
export const fetchPage = (
  settings: ResearchSettings,
  url: string
): Effect.Effect<PageOutcome, never, FileConverter> =>
  Effect.gen(function*() {
    const converter = yield* FileConverter
    const downloaded = yield* download(settings, url)
    if (typeof downloaded === "string") return { _tag: "PageFailure", url, reason: downloaded } satisfies PageFailure
    const converted = yield* converter.convert(
      {
        filename: filenameFor(downloaded.contentType),
        contentType: downloaded.contentType === "" ? undefined : downloaded.contentType,
        bytes: downloaded.bytes
      },
      ["native", "text"]
    ).pipe(Effect.result)
    if (converted._tag === "Failure") {
      return { _tag: "PageFailure", url, reason: "no readable text" } satisfies PageFailure
    }
    return {
      _tag: "FetchedPage",
      url,
      finalUrl: downloaded.finalUrl,
      contentType: downloaded.contentType,
      bytes: downloaded.bytes.byteLength,
      truncated: downloaded.truncated,
      text: converted.success.markdown
    } satisfies FetchedPage
  })

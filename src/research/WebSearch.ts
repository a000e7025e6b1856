/**
 * Web search providers behind one shape: a query in, ranked results (title, URL, snippet) out. Brave Search and
 * Tavily are hosted APIs with a key; SearXNG is a self-hosted metasearch engine answering JSON (`format=json`
 * must be enabled in its settings). Provider failures become `ResearchUpstreamError` with the status and the
 * provider's own words, after the key has been scrubbed from them. An answer is read up to a byte cap: an endless one
 * fails there, not at the time limit.
 */
import { Duration, Effect, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { ResearchNotConfigured, ResearchUpstreamError } from "../domain/Research.ts"
import { BodyTooLarge, cappedBytes } from "../net/CappedBody.ts"
import type { ResearchSettings, WebSearchProviderName } from "./ResearchSettings.ts"

export interface WebResult {
  readonly title: string
  readonly url: string
  readonly snippet: string
}

export interface WebSearchProvider {
  readonly name: Exclude<WebSearchProviderName, "none">
  readonly search: (query: string, count: number) => Effect.Effect<ReadonlyArray<WebResult>, ResearchUpstreamError>
}

const hostedEndpoints = {
  brave: "https://api.search.brave.com/res/v1/web/search",
  tavily: "https://api.tavily.com/search"
} as const

const BraveAnswer = Schema.Struct({
  web: Schema.optionalKey(Schema.Struct({
    results: Schema.Array(Schema.Struct({
      title: Schema.optionalKey(Schema.String),
      url: Schema.String,
      description: Schema.optionalKey(Schema.String),
      extra_snippets: Schema.optionalKey(Schema.Array(Schema.String))
    }))
  }))
})

const TavilyAnswer = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    title: Schema.optionalKey(Schema.NullOr(Schema.String)),
    url: Schema.String,
    content: Schema.optionalKey(Schema.NullOr(Schema.String))
  }))
})

const SearxngAnswer = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    title: Schema.optionalKey(Schema.NullOr(Schema.String)),
    url: Schema.String,
    content: Schema.optionalKey(Schema.NullOr(Schema.String))
  }))
})

/** Search result markup (Brave marks matches with <strong>) and entities, as plain text. */
const plain = (text: string | null | undefined) =>
  (text ?? "").replace(/<[^>]+>/g, "").replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: "\"", "#39": "'" })[name] ?? ""
  ).replace(/\s+/g, " ").trim()

const scrub = (text: string, key: Option.Option<Redacted.Redacted<string>>) => {
  const secret = Option.match(key, { onNone: () => "", onSome: Redacted.value })
  const cleaned = (secret === "" ? text : text.split(secret).join("[redacted]")).replace(/\s+/g, " ").trim()
  return cleaned.length > 300 ? `${cleaned.slice(0, 300)}…` : cleaned
}

/** Bytes a search provider's answer may take (a page of results is tens of KiB); the download stops there. */
export const maxAnswerBytes = 4 * 1024 * 1024

const call = <S extends Schema.Top>(
  client: HttpClient.HttpClient,
  provider: string,
  request: HttpClientRequest.HttpClientRequest,
  schema: S,
  settings: ResearchSettings
): Effect.Effect<S["Type"], ResearchUpstreamError, S["DecodingServices"]> => {
  const host = new URL(request.url).host
  const fail = (detail: string) => new ResearchUpstreamError({ detail: `web search (${provider}) failed: ${detail}` })
  return Effect.gen(function*() {
    const response = yield* client.execute(request).pipe(
      Effect.mapError((error) => fail(`could not reach ${host}: ${scrub(error.message, settings.apiKey)}`))
    )
    const bytes = yield* cappedBytes(response.stream, maxAnswerBytes).pipe(
      Effect.mapError((error) =>
        error instanceof BodyTooLarge
          ? fail(`${host} answered more than ${maxAnswerBytes} bytes; reading stopped there`)
          : fail(`${host} closed the connection mid-answer`)
      )
    )
    const text = new TextDecoder().decode(bytes)
    if (response.status === 401 || response.status === 403) {
      return yield* fail(`${host} refused the API key (HTTP ${response.status}); check SERVICE_API_WEB_SEARCH_API_KEY`)
    }
    if (response.status < 200 || response.status >= 300) {
      return yield* fail(`${host} answered HTTP ${response.status}: ${scrub(text, settings.apiKey)}`)
    }
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => fail(`${host} answered with something that is not JSON`)
    })
    return yield* Schema.decodeUnknownEffect(schema)(json).pipe(
      Effect.mapError(() => fail(`${host} answered JSON of an unexpected shape`))
    )
  }).pipe(
    Effect.timeoutOrElse({
      duration: settings.searchTimeout,
      orElse: () => Effect.fail(fail(`${host} did not answer within ${Duration.format(settings.searchTimeout)}`))
    })
  )
}

const keyOf = (settings: ResearchSettings) => Option.getOrElse(Option.map(settings.apiKey, Redacted.value), () => "")

const brave = (client: HttpClient.HttpClient, settings: ResearchSettings, url: string): WebSearchProvider => ({
  name: "brave",
  search: (query, count) =>
    call(
      client,
      "brave",
      HttpClientRequest.get(url).pipe(
        HttpClientRequest.setUrlParams({ q: query, count: String(Math.min(20, count)) }),
        HttpClientRequest.setHeaders({ accept: "application/json", "x-subscription-token": keyOf(settings) })
      ),
      BraveAnswer,
      settings
    ).pipe(
      Effect.map((answer) =>
        (answer.web?.results ?? []).map((result) => ({
          title: plain(result.title),
          url: result.url,
          snippet: plain([result.description ?? "", ...(result.extra_snippets ?? [])].join(" "))
        }))
      )
    )
})

const tavily = (client: HttpClient.HttpClient, settings: ResearchSettings, url: string): WebSearchProvider => ({
  name: "tavily",
  search: (query, count) =>
    call(
      client,
      "tavily",
      HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeaders({ accept: "application/json", authorization: `Bearer ${keyOf(settings)}` }),
        HttpClientRequest.bodyJsonUnsafe({ query, max_results: Math.min(20, count), search_depth: "basic" })
      ),
      TavilyAnswer,
      settings
    ).pipe(
      Effect.map((answer) =>
        answer.results.map((result) => ({
          title: plain(result.title),
          url: result.url,
          snippet: plain(result.content)
        }))
      )
    )
})

const searxng = (client: HttpClient.HttpClient, settings: ResearchSettings, baseUrl: string): WebSearchProvider => ({
  name: "searxng",
  // SearXNG returns a fixed page of results; the count is applied here.
  search: (query, count) =>
    call(
      client,
      "searxng",
      HttpClientRequest.get(`${baseUrl.replace(/\/+$/, "")}/search`).pipe(
        HttpClientRequest.setUrlParams({ q: query, format: "json" }),
        HttpClientRequest.setHeaders({
          accept: "application/json",
          ...Option.match(settings.apiKey, {
            onNone: () => ({}),
            onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
          })
        })
      ),
      SearxngAnswer,
      settings
    ).pipe(
      Effect.map((answer) =>
        answer.results.slice(0, count).map((result) => ({
          title: plain(result.title),
          url: result.url,
          snippet: plain(result.content)
        }))
      )
    )
})

const notConfigured = (detail: string, setting: string) => new ResearchNotConfigured({ detail, setting })

/** The configured provider, or why there is none. */
export const makeWebSearch = (
  settings: ResearchSettings,
  client: HttpClient.HttpClient
): Effect.Effect<WebSearchProvider, ResearchNotConfigured> => {
  const baseUrl = Option.getOrUndefined(settings.baseUrl)
  switch (settings.provider) {
    case "none":
      return Effect.fail(notConfigured(
        "internet research is not configured: set SERVICE_API_WEB_SEARCH_PROVIDER to brave, tavily or searxng",
        "SERVICE_API_WEB_SEARCH_PROVIDER"
      ))
    case "searxng":
      return baseUrl === undefined
        ? Effect.fail(notConfigured(
          "SERVICE_API_WEB_SEARCH_PROVIDER=searxng needs SERVICE_API_WEB_SEARCH_BASE_URL (your SearXNG instance)",
          "SERVICE_API_WEB_SEARCH_BASE_URL"
        ))
        : Effect.succeed(searxng(client, settings, baseUrl))
    case "brave":
    case "tavily": {
      if (Option.isNone(settings.apiKey) || Redacted.value(settings.apiKey.value).trim() === "") {
        return Effect.fail(notConfigured(
          `SERVICE_API_WEB_SEARCH_PROVIDER=${settings.provider} needs SERVICE_API_WEB_SEARCH_API_KEY`,
          "SERVICE_API_WEB_SEARCH_API_KEY"
        ))
      }
      const url = baseUrl ?? hostedEndpoints[settings.provider]
      return Effect.succeed(
        settings.provider === "brave" ? brave(client, settings, url) : tavily(client, settings, url)
      )
    }
  }
}

/**
 * Internet research settings: which web search provider answers (`SERVICE_API_WEB_SEARCH_*`) and how pages are
 * read (`SERVICE_API_RESEARCH_*`: time, size and count limits, whether private network addresses may be fetched).
 * The provider key stays `Redacted`: it is sent only to the configured provider and never logged or returned.
 */
import { Config, Duration, Option, type Redacted } from "effect"

export const webSearchProviders = ["none", "brave", "tavily", "searxng"] as const
export type WebSearchProviderName = typeof webSearchProviders[number]

export interface ResearchSettings {
  readonly provider: WebSearchProviderName
  /** Where the provider answers: required for SearXNG (your instance), an override for the hosted APIs. */
  readonly baseUrl: Option.Option<string>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** Limit for one call to the search provider. */
  readonly searchTimeout: Duration.Duration
  /** Limit for fetching one page, redirects and body included. */
  readonly fetchTimeout: Duration.Duration
  /** Bytes read from one page at most; the rest is not downloaded. */
  readonly maxPageBytes: number
  /** Pages read for one question at most (the `high` budget reads this many). */
  readonly maxPages: number
  /**
   * Pages on loopback, private, link-local and other non-public addresses are refused unless this is set:
   * a search result must not turn the service into a proxy into its own network.
   */
  readonly allowPrivateNetworks: boolean
}

export const defaultResearchSettings: ResearchSettings = {
  provider: "none",
  baseUrl: Option.none(),
  apiKey: Option.none(),
  searchTimeout: Duration.seconds(15),
  fetchTimeout: Duration.seconds(10),
  maxPageBytes: 2 * 1024 * 1024,
  maxPages: 6,
  allowPrivateNetworks: false
}

const nonEmpty = <A>(config: Config.Config<Option.Option<A>>, isEmpty: (value: A) => boolean) =>
  config.pipe(Config.map(Option.filter((value: A) => !isEmpty(value))))

export const researchSettingsConfig: Config.Config<ResearchSettings> = Config.all({
  provider: Config.Literals(webSearchProviders, "SERVICE_API_WEB_SEARCH_PROVIDER").pipe(
    Config.withDefault(defaultResearchSettings.provider)
  ),
  baseUrl: nonEmpty(Config.option(Config.String("SERVICE_API_WEB_SEARCH_BASE_URL")), (value) => value.trim() === ""),
  apiKey: Config.option(Config.Redacted("SERVICE_API_WEB_SEARCH_API_KEY")),
  searchTimeout: Config.Duration("SERVICE_API_WEB_SEARCH_TIMEOUT").pipe(
    Config.withDefault(defaultResearchSettings.searchTimeout)
  ),
  fetchTimeout: Config.Duration("SERVICE_API_RESEARCH_FETCH_TIMEOUT").pipe(
    Config.withDefault(defaultResearchSettings.fetchTimeout)
  ),
  maxPageBytes: Config.Int("SERVICE_API_RESEARCH_MAX_PAGE_BYTES").pipe(
    Config.withDefault(defaultResearchSettings.maxPageBytes)
  ),
  maxPages: Config.Int("SERVICE_API_RESEARCH_MAX_PAGES").pipe(Config.withDefault(defaultResearchSettings.maxPages)),
  allowPrivateNetworks: Config.Boolean("SERVICE_API_RESEARCH_ALLOW_PRIVATE_NETWORKS").pipe(
    Config.withDefault(defaultResearchSettings.allowPrivateNetworks)
  )
})

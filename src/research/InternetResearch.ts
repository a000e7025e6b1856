/**
 * Internet research: search the web with the configured provider, read the top pages within the configured
 * limits, and answer from them with the bank's reflect model (or an extract when there is none), citing each
 * source. It never reads or writes the bank's memories; the bank is only looked up so an unknown bank is a 404
 * like every other read.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { HttpClient } from "effect/http"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { type NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { Budget } from "../domain/Recall.ts"
import type { ResearchRequest, ResearchResponse } from "../domain/Research.ts"
import type { ResearchNotConfigured, ResearchUpstreamError } from "../domain/Research.ts"
import type { ReflectToolCall } from "../domain/Reflect.ts"
import { FileConverter } from "../files/FileConverter.ts"
import { Llm, usageJson } from "../models/Llm.ts"
import { fetchPage, type PageOutcome } from "./PageFetcher.ts"
import { excerpt } from "./Passages.ts"
import { answerWithModel, extractiveAnswer, type Source } from "./ResearchAnswer.ts"
import { makeWebSearch, type WebResult } from "./WebSearch.ts"

/** Pages read and characters of page text shown to the model, per budget (pages capped by the setting). */
const budgets: Record<Budget, { readonly pages: number; readonly contextChars: number }> = {
  low: { pages: 2, contextChars: 16_000 },
  mid: { pages: 4, contextChars: 32_000 },
  high: { pages: 8, contextChars: 64_000 }
}

const defaultMaxTokens = 4096

/** One result per page: the same article reached twice (tracking parameters, fragments) is read once. */
const distinct = (results: ReadonlyArray<WebResult>) => {
  const seen = new Set<string>()
  return results.filter((result) => {
    const url = URL.parse(result.url)
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) return false
    url.hash = ""
    const key = url.toString()
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

export class InternetResearch extends Context.Service<InternetResearch, {
  readonly research: (
    bankId: string,
    request: ResearchRequest
  ) => Effect.Effect<ResearchResponse, NotFound | ResearchNotConfigured | ResearchUpstreamError | ServiceUnavailable>
}>()("engram/research/InternetResearch") {
  static readonly layer = Layer.effect(
    InternetResearch,
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const banks = yield* Banks
      const llm = yield* Llm
      const client = yield* HttpClient.HttpClient
      const converter = yield* FileConverter
      const settings = config.research

      const research = Effect.fn("InternetResearch.research")(function*(bankId: string, request: ResearchRequest) {
        yield* banks.get(bankId)
        const search = yield* makeWebSearch(settings, client)
        const budget = budgets[request.budget ?? "mid"]
        const pages = Math.max(1, Math.min(budget.pages, settings.maxPages))
        const maxTokens = request.max_tokens ?? defaultMaxTokens
        const question = request.query.trim()
        const traceOn = request.include?.tool_calls !== undefined && request.include?.tool_calls !== null
        const withOutput = request.include?.tool_calls?.output ?? true
        const toolCalls: Array<ReflectToolCall> = []
        const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.gen(function*() {
            const started = yield* Clock.currentTimeMillis
            const value = yield* effect
            return { value, ms: (yield* Clock.currentTimeMillis) - started }
          })

        const searched = yield* timed(search.search(question, pages * 2))
        const results = distinct(searched.value).slice(0, pages)
        toolCalls.push({
          tool: "web_search",
          input: { query: question, provider: search.name, count: pages * 2 },
          output: withOutput ? { results: searched.value.map(({ title, url }) => ({ title, url })) } : null,
          duration_ms: searched.ms,
          iteration: 1
        })

        const fetched = yield* Effect.forEach(
          results,
          (result) => timed(fetchPage(settings, result.url)).pipe(Effect.provideService(FileConverter, converter)),
          { concurrency: 4 }
        )
        fetched.forEach(({ value, ms }) =>
          toolCalls.push({
            tool: "fetch_page",
            input: { url: value.url },
            output: withOutput ? describeFetch(value) : null,
            duration_ms: ms,
            iteration: 2
          })
        )

        const perSource = Math.floor(budget.contextChars / Math.max(1, results.length))
        const seenUrls = new Set<string>()
        const sources: Array<Source> = results.flatMap((result, index): Array<Source> => {
          const page = fetched[index]!.value
          if (page._tag === "FetchedPage" && page.text.trim() !== "") {
            return [{
              title: result.title,
              url: page.finalUrl,
              text: excerpt(page.text, question, perSource),
              fromSnippet: false
            }]
          }
          return result.snippet === ""
            ? []
            : [{ title: result.title, url: result.url, text: result.snippet, fromSnippet: true }]
        }).filter((source) => {
          // Two results redirecting to one page are one source: [n] must stay aligned with source_urls.
          if (seenUrls.has(source.url)) return false
          seenUrls.add(source.url)
          return true
        })

        const llmCalls: Array<{ scope: string; duration_ms: number }> = []
        const answer = sources.length === 0
          ? {
            text: "The web search found no page to answer from.",
            usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
          }
          : !llm.available("reflect")
          ? extractiveAnswer(question, sources, maxTokens)
          : yield* timed(answerWithModel({ bankId, question, sources, maxTokens })).pipe(
            Effect.provideService(Llm, llm),
            Effect.tap(({ ms }) => Effect.sync(() => llmCalls.push({ scope: "research.answer", duration_ms: ms }))),
            Effect.map(({ value }) => value),
            Effect.mapError((error) =>
              new ServiceUnavailable({ detail: `the language model failed during research: ${error.message}` })
            )
          )

        return {
          text: answer.text,
          source_urls: sources.map((source) => source.url),
          writes_to_bank: false as const,
          usage: usageJson(answer.usage),
          trace: traceOn ? { tool_calls: toolCalls, llm_calls: llmCalls } : null
        }
      })

      return InternetResearch.of({ research })
    })
  )
}

const describeFetch = (outcome: PageOutcome) =>
  outcome._tag === "FetchedPage"
    ? {
      read: true,
      final_url: outcome.finalUrl,
      content_type: outcome.contentType,
      bytes: outcome.bytes,
      truncated: outcome.truncated,
      chars: outcome.text.length
    }
    : { read: false, reason: outcome.reason }

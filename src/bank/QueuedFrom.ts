/**
 * Background work and the request that queued it: the queuing span is saved with the operation as a W3C
 * `traceparent`, and the operation's run later starts its own trace with a link back to it (a link, not a
 * parent: the run outlives the request, may retry, and may happen after a restart). Nothing is saved while
 * spans are not exported, so this costs nothing when tracing is off.
 */
import { Effect, Option, Tracer } from "effect"
import { Headers, HttpTraceContext } from "effect/http"

/** The `traceparent` of the span running now, or null when spans are not exported. */
export const currentTraceParent: Effect.Effect<string | null> = Effect.gen(function*() {
  const tracer = yield* Effect.tracer
  if (tracer === Tracer.nativeTracer) return null
  const span = yield* Effect.option(Effect.currentSpan)
  if (Option.isNone(span) || !span.value.sampled) return null
  return HttpTraceContext.toHeaders(span.value)["traceparent"] ?? null
})

/** The link to the span that queued the work, when one was saved and still parses. */
export const linkToQueuer = (traceParent: string | null): ReadonlyArray<Tracer.SpanLink> => {
  if (traceParent === null) return []
  const span = HttpTraceContext.fromHeaders(Headers.fromRecordUnsafe({ traceparent: traceParent }))
  return Option.isSome(span) ? [{ span: span.value, attributes: { "engram.link": "queued_by" } }] : []
}

/**
 * A loopback OTLP/HTTP trace receiver for tests: it accepts `POST /v1/traces` with JSON bodies, answers 200 like
 * a collector, and keeps every body and its headers so a test can assert what the service exported.
 */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"

export interface ReceivedExport {
  readonly headers: IncomingHttpHeaders
  /** The body as sent, so a test can search it for text that must never be exported. */
  readonly raw: string
  readonly body: any
}

/** One exported span with its resource's attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly resource: Record<string, unknown>
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:port`: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  readonly origin: string
  readonly exports: ReadonlyArray<ReceivedExport>
  readonly spans: () => ReadonlyArray<ReceivedSpan>
}

const valueOf = (value: any): unknown =>
  value === undefined || value === null ?
    undefined
    : "stringValue" in value ?
    value.stringValue
    : "intValue" in value ?
    Number(value.intValue)
    : "doubleValue" in value ?
    value.doubleValue
    : "boolValue" in value ?
    value.boolValue
    : "arrayValue" in value ?
    (value.arrayValue.values ?? []).map(valueOf)
    : value

const attributesOf = (list: ReadonlyArray<any> | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]))

/** Starts the receiver for the enclosing scope. */
export const otlpReceiver = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<OtlpReceiver & { readonly close: () => Promise<void> }>((resolve) => {
      const exports: Array<ReceivedExport> = []
      const server = createServer((request, response) => {
        let raw = ""
        request.setEncoding("utf8")
        request.on("data", (chunk) => (raw += chunk))
        request.on("end", () => {
          if (request.method !== "POST" || request.url !== "/v1/traces") {
            response.writeHead(404).end()
            return
          }
          exports.push({ headers: request.headers, raw, body: JSON.parse(raw) })
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resolve({
          origin: `http://127.0.0.1:${port}`,
          exports,
          spans: () =>
            exports.flatMap((received) =>
              (received.body.resourceSpans ?? []).flatMap((resourceSpan: any) =>
                (resourceSpan.scopeSpans ?? []).flatMap((scopeSpan: any) =>
                  (scopeSpan.spans ?? []).map((span: any): ReceivedSpan => ({
                    traceId: span.traceId,
                    spanId: span.spanId,
                    parentSpanId: span.parentSpanId ?? "",
                    name: span.name,
                    kind: span.kind,
                    attributes: attributesOf(span.attributes),
                    links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
                    resource: attributesOf(resourceSpan.resource?.attributes)
                  }))
                )
              )
            ),
          close: () => new Promise<void>((done) => server.close(() => done()))
        })
      })
    })
  ),
  (receiver) => Effect.promise(() => receiver.close())
)

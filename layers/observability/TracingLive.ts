/**
 * Trace export over OTLP/HTTP, configured by the standard OpenTelemetry variables: on when
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set, otherwise nothing is built at all
 * (Effect's native tracer stays in place and the HTTP server skips its request spans). It must never put
 * request content into spans: what a span carries is decided where the span is made.
 */
import { Config, Duration, Effect, Layer, Option, Schema } from "effect"
import { FetchHttpClient, UrlParams } from "effect/http"
import { type OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import { InvalidConfiguration } from "../../src/config/EngramConfig.ts"

export type OtlpProtocol = "http/protobuf" | "http/json"

export interface TracingSettings {
  /** Where spans are POSTed: the traces endpoint as given, or `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  readonly url: string
  readonly protocol: OtlpProtocol
  readonly serviceName: string
  /** Sent with every export (collector or vendor credentials): never logged. */
  readonly headers: Readonly<Record<string, string>>
  readonly exportInterval: Duration.Duration
}

const optional = <A>(config: Config.Config<A>) => Config.option(config)

/** `k1=v1,k2=v2` with percent-encoded values, as the OpenTelemetry specification writes headers. */
const headersFrom = (name: string) => optional(Config.Record(Schema.String, Schema.StringFromUriComponent, name))

const variables = Config.all({
  tracesEndpoint: optional(Config.URL("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  endpoint: optional(Config.URL("OTEL_EXPORTER_OTLP_ENDPOINT")),
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  exporter: Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp")),
  tracesProtocol: optional(Config.String("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")),
  protocol: optional(Config.String("OTEL_EXPORTER_OTLP_PROTOCOL")),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("engram")),
  tracesHeaders: headersFrom("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  headers: headersFrom("OTEL_EXPORTER_OTLP_HEADERS"),
  exportIntervalMs: Config.Int("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000))
})

/**
 * The settings, or none when trace export is off: no endpoint, `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The per-signal variables win over the general ones, as the specification says.
 */
export const tracingSettings: Effect.Effect<Option.Option<TracingSettings>, Config.ConfigError | InvalidConfiguration> =
  Effect.gen(function*() {
    const value = yield* variables
    if (value.disabled || value.exporter.trim().toLowerCase() === "none") return Option.none()
    const url = Option.isSome(value.tracesEndpoint)
      ? Option.some(value.tracesEndpoint.value.toString())
      : Option.map(value.endpoint, (base) => {
        base.pathname = `${base.pathname.replace(/\/+$/, "")}/v1/traces`
        return base.toString()
      })
    if (Option.isNone(url)) return Option.none()
    const protocol = Option.getOrElse(Option.orElse(value.tracesProtocol, () => value.protocol), () => "http/protobuf")
    // Effect exports OTLP over HTTP only; failing the start beats silently sending HTTP to a gRPC port.
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      return yield* new InvalidConfiguration({
        message: `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json (port 4318)`
      })
    }
    return Option.some({
      url: url.value,
      protocol,
      serviceName: value.serviceName,
      headers: Option.getOrElse(Option.orElse(value.tracesHeaders, () => value.headers), () => ({})),
      exportInterval: Duration.millis(value.exportIntervalMs)
    })
  })

/**
 * Query parameters whose values never reach a span's URL attributes (server and client spans alike): `q` and
 * `query` carry users' search text, in engram's own list routes and in web-search requests made for research.
 */
const RedactedQueryNames = Layer.succeed(
  UrlParams.CurrentRedactedNames,
  [...UrlParams.CurrentRedactedNames.defaultValue(), "q", "query"]
)

/** Exports every sampled span to the endpoint; buffered spans are flushed when the application shuts down. */
export const layer = (settings: TracingSettings): Layer.Layer<OtlpExporter.Flusher> =>
  OtlpTracer.layer({
    url: settings.url,
    resource: { serviceName: settings.serviceName },
    headers: settings.headers,
    exportInterval: settings.exportInterval
  }).pipe(
    Layer.provide(settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer),
    Layer.merge(RedactedQueryNames)
  )

/** Trace export as the environment configures it; with no endpoint this layer is empty. */
export const TracingLive: Layer.Layer<never, Config.ConfigError | InvalidConfiguration> = Layer.unwrap(
  Effect.map(
    tracingSettings,
    (settings): Layer.Layer<never> => Option.isSome(settings) ? layer(settings.value) : Layer.empty
  )
)

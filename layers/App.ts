/**
 * The single place where engram is wired as it runs: configuration from the environment, configured models and,
 * when an OTLP endpoint is configured, trace export.
 */
import { Layer } from "effect"
import { EngramConfig } from "../src/config/EngramConfig.ts"
import { AppWith } from "./AppWith.ts"
import { ModelsLive } from "./Models.ts"
import { TracingLive } from "./observability/TracingLive.ts"
import { IdleHeapReleaseLive } from "./runtime/IdleHeapRelease.ts"
import { ServicesWith } from "./Services.ts"

/** The engine (no HTTP) with the models chosen by configuration. */
export const ServicesLive = ServicesWith(ModelsLive)

/**
 * The service as `npm start` runs it. The tracer is provided beneath everything, so every fiber the service
 * forks (request handlers, bank actors, background loops) exports its spans, and the exporter flushes last. Idle
 * garbage goes back to the system (see `IdleHeapRelease`).
 */
export const AppLive = AppWith(EngramConfig.layer, ModelsLive).pipe(
  Layer.provide(TracingLive),
  Layer.provideMerge(IdleHeapReleaseLive)
)

export { AppWith }

/** The single place where engram is wired: configuration, database, engine and the HTTP server. */
import { Layer } from "effect"
import { EngramConfig } from "../src/config/EngramConfig.ts"
import { HttpServerLive } from "./http/HttpServerLive.ts"
import { ServicesLive } from "./Services.ts"

/** The whole service with explicit configuration (tests and embedders pass their own `EngramConfig`). */
export const AppWith = <E, R>(config: Layer.Layer<EngramConfig, E, R>) =>
  HttpServerLive.pipe(Layer.provideMerge(ServicesLive), Layer.provideMerge(config))

/** The service as `npm start` runs it: configuration from the environment. */
export const AppLive = AppWith(EngramConfig.layer)

export { ServicesLive }

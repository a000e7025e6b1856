/** The whole service assembled from explicit configuration and model layers (tests and embedders use this). */
import { Layer } from "effect"
import type { EngramConfig } from "../src/config/EngramConfig.ts"
import type { Embeddings } from "../src/models/Embeddings.ts"
import type { Llm } from "../src/models/Llm.ts"
import { HttpServerLive } from "./http/HttpServerLive.ts"
import { ServicesWith } from "./Services.ts"

export const AppWith = <E, R, E2, R2>(
  config: Layer.Layer<EngramConfig, E, R>,
  models: Layer.Layer<Embeddings | Llm, E2, R2>
) => HttpServerLive.pipe(Layer.provideMerge(ServicesWith(models)), Layer.provideMerge(config))

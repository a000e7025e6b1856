/**
 * engram as an Effect library: the services an in-process program uses, the layers that provide them, and
 * the REST contract for typed clients. `EngramLive` runs the engine without HTTP; `AppWith` adds the server.
 */
export { AppLive, AppWith, ServicesLive } from "../layers/App.ts"
export { BankActors } from "./bank/BankActors.ts"
export { Banks } from "./bank/Banks.ts"
export { Operations } from "./bank/Operations.ts"
export { TaskFailure, type TaskHandler, TaskRegistry } from "./bank/TaskRegistry.ts"
export { EngramConfig, type EngramSettings } from "./config/EngramConfig.ts"
export * as Bank from "./domain/Bank.ts"
export * as Errors from "./domain/Errors.ts"
export * as Operation from "./domain/Operation.ts"
export { EngramApi } from "./http/api/Api.ts"
export { Documents } from "./memory/Documents.ts"
export { Entities } from "./memory/Entities.ts"
export { MemoryUnits } from "./memory/MemoryUnits.ts"
export { Recall } from "./memory/recall/Recall.ts"
export { Retain } from "./memory/retain/Retain.ts"
export { Embeddings } from "./models/Embeddings.ts"
export { Llm } from "./models/Llm.ts"

import { Layer } from "effect"
import { ServicesLive } from "../layers/App.ts"
import { ModelsLive } from "../layers/Models.ts"
import { ServicesWith } from "../layers/Services.ts"
import type { Embeddings as EmbeddingsService } from "./models/Embeddings.ts"
import type { Llm as LlmService } from "./models/Llm.ts"
import type { EngramSettings } from "./config/EngramConfig.ts"
import { EngramConfig } from "./config/EngramConfig.ts"

/** The engine configured from the environment, with no HTTP server: provide it to an Effect program. */
export const EngramLive = ServicesLive.pipe(Layer.provideMerge(EngramConfig.layer))

/**
 * The engine with explicit settings (the rest from the environment or defaults) and, optionally, explicit
 * model layers instead of the configured ones.
 */
export const engramWith = <E = never, R = never>(
  settings: Partial<EngramSettings>,
  models: Layer.Layer<EmbeddingsService | LlmService, E, R> = ModelsLive as unknown as Layer.Layer<
    EmbeddingsService | LlmService,
    E,
    R
  >
) => ServicesWith(models).pipe(Layer.provideMerge(EngramConfig.layerWith(settings)))

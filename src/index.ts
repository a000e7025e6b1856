/**
 * engram as an Effect library: the services an in-process program uses, the layers that provide them, and
 * the REST contract for typed clients. `EngramLive` runs the engine without HTTP; `AppWith` adds the server.
 */
export { Banks } from "./bank/Banks.ts"
export { BankActors } from "./bank/BankActors.ts"
export { EngramConfig, type EngramSettings } from "./config/EngramConfig.ts"
export * as Bank from "./domain/Bank.ts"
export * as Errors from "./domain/Errors.ts"
export * as Operation from "./domain/Operation.ts"
export { EngramApi } from "./http/api/Api.ts"
export { Operations } from "./operations/Operations.ts"
export { TaskFailure, type TaskHandler, TaskRegistry } from "./operations/TaskRegistry.ts"
export { AppLive, AppWith, ServicesLive } from "../layers/App.ts"

import { Layer } from "effect"
import { ServicesLive } from "../layers/App.ts"
import type { EngramSettings } from "./config/EngramConfig.ts"
import { EngramConfig } from "./config/EngramConfig.ts"

/** The engine configured from the environment, with no HTTP server: provide it to an Effect program. */
export const EngramLive = ServicesLive.pipe(Layer.provideMerge(EngramConfig.layer))

/** The engine with explicit settings (the rest from the environment or defaults). */
export const engramWith = (settings: Partial<EngramSettings>) =>
  ServicesLive.pipe(Layer.provideMerge(EngramConfig.layerWith(settings)))

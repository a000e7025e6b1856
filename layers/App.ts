/** The single place where engram is wired as it runs: configuration from the environment, configured models. */
import { Layer } from "effect"
import { EngramConfig } from "../src/config/EngramConfig.ts"
import { AppWith } from "./AppWith.ts"
import { ModelsLive } from "./Models.ts"
import { ServicesWith } from "./Services.ts"

/** The engine (no HTTP) with the models chosen by configuration. */
export const ServicesLive = ServicesWith(ModelsLive)

/** The service as `npm start` runs it. */
export const AppLive = AppWith(EngramConfig.layer, ModelsLive)

export { AppWith }

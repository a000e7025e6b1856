/**
 * Starts engram as configured by the environment. All wiring lives in layers/App.ts. `serve` is the program
 * itself, so `engram serve` (src/cli/commands/Serve.ts) runs exactly what `npm start` runs.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { AppLive } from "../layers/App.ts"
import { serviceTeardown } from "./ServiceExit.ts"
import { EngramConfig } from "./config/EngramConfig.ts"

const announce = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* EngramConfig
  yield* Effect.logInfo(`engram listening on http://${config.host}:${config.port} (docs at /docs)`)
}))

export const serve = Layer.launch(Layer.provideMerge(announce, AppLive))

if (import.meta.main) serve.pipe(NodeRuntime.runMain({ teardown: serviceTeardown }))

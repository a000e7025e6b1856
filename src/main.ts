/** Starts engram as configured by the environment. All wiring lives in layers/App.ts. */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { AppLive } from "../layers/App.ts"
import { EngramConfig } from "./config/EngramConfig.ts"

const announce = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* EngramConfig
  yield* Effect.logInfo(`engram listening on http://${config.host}:${config.port} (docs at /docs)`)
}))

Layer.launch(Layer.provideMerge(announce, AppLive)).pipe(NodeRuntime.runMain)

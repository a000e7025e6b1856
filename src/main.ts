/**
 * Starts engram as configured by the environment. All wiring lives in layers/App.ts. `serve` is the program
 * itself, so `engram serve` (src/cli/commands/Serve.ts) runs exactly what `npm start` runs.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Duration, Effect, Layer, Scheduler } from "effect"
import { flushCompileCache } from "node:module"
import { makeTimeSlicedScheduler } from "../layers/runtime/TimeSlicedScheduler.ts"
import { AppLive } from "../layers/App.ts"
import { serviceTeardown } from "./ServiceExit.ts"
import { EngramConfig, turnBudgetConfig } from "./config/EngramConfig.ts"

const announce = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* EngramConfig
  yield* Effect.logInfo(`engram listening on http://${config.host}:${config.port} (docs at /docs)`)
  // With NODE_COMPILE_CACHE set, what start-up compiled is written now, not at a normal exit a killed or crashed
  // server never reaches: the next start then skips ~1.3 CPU s of compiling (`node bench/start-cost.ts`). A no-op
  // without the cache.
  flushCompileCache()
}))

/**
 * Every fiber of the service shares one time-sliced scheduler, so no turn of the event loop runs longer than its
 * budget, banks share each turn fairly and a probe never waits behind fifty requests' work
 * (layers/runtime/TimeSlicedScheduler.ts, src/http/RequestLanes.ts).
 */
export const serve = Effect.gen(function*() {
  const budget = Duration.toMillis(yield* turnBudgetConfig)
  const launch = Layer.launch(Layer.provideMerge(announce, AppLive))
  return yield* budget > 0
    ? launch.pipe(Effect.provideService(Scheduler.Scheduler, makeTimeSlicedScheduler(budget)))
    : launch
})

if (import.meta.main) serve.pipe(NodeRuntime.runMain({ teardown: serviceTeardown }))

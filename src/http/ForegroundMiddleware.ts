/** Counts every HTTP request (REST and MCP) as interactive work in flight, so background slices wait for a lull. */
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { Foreground } from "../bank/Foreground.ts"

export const foregroundMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const foreground = yield* Foreground
    return (httpEffect) => foreground.request(httpEffect)
  }),
  { global: true }
)

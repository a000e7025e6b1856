/**
 * Every request runs in its bank's lane of the service's scheduler, and the probes (`/health`, its `live` and `ready`
 * forms, `/version`) in a lane served before all others. The service's scheduler (layers/runtime/TimeSlicedScheduler.ts,
 * provided by src/main.ts) shares each turn of the event loop round-robin between lanes, so a bank's recall waits for
 * one slice of each other busy bank, not for fifty other clients' requests, and a health check for one turn at most.
 * Under another scheduler (an embedding program's, the tests' in-process servers) a request only yields once.
 * Nothing here reads the request's body.
 */
import { Effect, Scheduler } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { bankInPath } from "./AuthFirst.ts"

/** A scheduler that can give the scheduler of another lane. */
export interface LanedScheduler extends Scheduler.Scheduler {
  readonly lane: (key: string) => Scheduler.Scheduler
}

const isLaned = (scheduler: Scheduler.Scheduler): scheduler is LanedScheduler => "lane" in scheduler

/** The lane of the work no bank owns (start-up, the routes that name no bank). */
export const SERVICE_LANE = "service"
/** The probes' lane: every slice of a probe runs before any other lane's. */
export const PROBES_LANE = "probes"

const probePaths = /^\/(health(\/(live|ready))?|version)$/

/** The lane of a request: the probes', its bank's, or the service's for the routes that name no bank. */
export const laneOf = (path: string): string => {
  if (probePaths.test(path)) return PROBES_LANE
  const bank = bankInPath.exec(path)?.[1]
  return bank === undefined ? SERVICE_LANE : `bank:${bank}`
}

export const requestLanesMiddleware = HttpRouter.middleware(
  (httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const lane = laneOf(request.url.split("?")[0] ?? "")
      // Effect's dispatchers run lower numbers first: a probe's start goes ahead under any scheduler.
      const queued = Effect.andThen(Effect.yieldNowWith(lane === PROBES_LANE ? -1 : 0), httpEffect)
      const scheduler = yield* Scheduler.Scheduler
      // A fiber keeps the dispatcher it is first given: a request's is made by this first yield, in its lane.
      return yield* isLaned(scheduler)
        ? Effect.provideService(queued, Scheduler.Scheduler, scheduler.lane(lane))
        : queued
    }),
  { global: true }
)

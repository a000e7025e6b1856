/**
 * A background scheduler (expiry, retention, dreams) run as a cluster singleton that survives its own failures: a
 * failed pass (the database briefly away, a defect) is logged and the loop starts again after a pause, so one bad
 * moment never leaves a node without its scheduler. On a cluster only one runner runs it (see `ClusterNode.singleton`).
 */
import { Effect, type Scope } from "effect"
import { ClusterNode } from "./ClusterNode.ts"

/** Pause before a failed loop starts again: long enough not to spin on a database that is away. */
const restartAfter = "30 seconds"

export const supervisedSingleton = (
  name: string,
  loop: Effect.Effect<unknown, never, Scope.Scope>
): Effect.Effect<void, never, Scope.Scope | ClusterNode> =>
  Effect.gen(function*() {
    const node = yield* ClusterNode
    yield* node.singleton(
      name,
      loop.pipe(
        Effect.catchCause((cause) =>
          Effect.logError(`the ${name.replaceAll("-", " ")} stopped; restarting in 30 s`, cause)
        ),
        Effect.andThen(Effect.sleep(restartAfter)),
        Effect.forever,
        Effect.withTracerEnabled(false)
      )
    )
  })

/**
 * Forgetting wired: the `expiry_sweep` and `retention_sweep` tasks, the schedulers that queue them when memories
 * expire or a retention limit is passed, and the forget service. Sits above every store it deletes from (memories,
 * dreams, mental models, trajectories, repos).
 */
import { Layer } from "effect"
import { ExpiryScheduler, ExpirySweepTask } from "../src/memory/forgetting/ExpirySweep.ts"
import { Forget } from "../src/memory/forgetting/Forget.ts"
import { RetentionChecks, RetentionScheduler, RetentionSweepTask } from "../src/memory/forgetting/RetentionSweep.ts"

export const ForgettingLive = Layer.mergeAll(
  ExpirySweepTask,
  ExpiryScheduler,
  Forget.layer,
  RetentionSweepTask,
  RetentionScheduler.pipe(Layer.provideMerge(RetentionChecks.layer))
)

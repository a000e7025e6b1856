/**
 * Forgetting wired: the `expiry_sweep` task, the scheduler that queues it when memories expire, and the forget
 * service. Sits above every store it deletes from (memories, dreams, mental models, trajectories, repos).
 */
import { Layer } from "effect"
import { ExpiryScheduler, ExpirySweepTask } from "../src/memory/forgetting/ExpirySweep.ts"
import { Forget } from "../src/memory/forgetting/Forget.ts"

export const ForgettingLive = Layer.mergeAll(ExpirySweepTask, ExpiryScheduler, Forget.layer)

/**
 * Dreams wired: the dreams service, the `dream_generation` and `dream_prediction_check` tasks, the event trigger
 * after consolidation and the durable trance/expiry scheduler. Needs recall, graph intelligence, anomalies, retain
 * and mental models below it.
 */
import { Layer } from "effect"
import { DreamGenerationTask } from "../src/dreams/DreamGeneration.ts"
import { DreamAfterConsolidation, Dreams } from "../src/dreams/Dreams.ts"
import { DreamScheduler } from "../src/dreams/DreamScheduler.ts"
import { DreamStore } from "../src/dreams/DreamStore.ts"
import { PredictionCheckTask } from "../src/dreams/PredictionCheck.ts"

export const DreamsLive = Layer.mergeAll(
  Dreams.layer,
  DreamGenerationTask,
  PredictionCheckTask,
  DreamAfterConsolidation,
  DreamScheduler
).pipe(Layer.provideMerge(DreamStore.layer))

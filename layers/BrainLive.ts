/**
 * The brain runtime wired: `.brain` files (status, export, validate, import, and the files big banks keep their
 * brain in) and learning from another engram instance with its `brain_learn` task. Built on the memory layers and
 * mental models.
 */
import { Layer } from "effect"
import { BrainRuntime } from "../src/brain/BrainRuntime.ts"
import { KeptBrainFiles } from "../src/brain/KeptBrainFiles.ts"
import { BrainLearn, BrainLearnCancel, BrainLearnTask } from "../src/learn/BrainLearn.ts"

export const BrainLive = Layer.merge(BrainLearnTask, BrainLearnCancel).pipe(
  Layer.provideMerge(BrainLearn.layer),
  Layer.provideMerge(KeptBrainFiles.pipe(Layer.provideMerge(BrainRuntime.layer)))
)

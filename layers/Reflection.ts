/**
 * Reflection wired: directives, the mental-model reader, the reflect service (with its `reflect` task) and the
 * opinion tasks with their retain listener. Needs the memory layers (recall) and the engine below it; features
 * that reflect (mental models, research) are built on top of it.
 */
import { Layer } from "effect"
import { Directives } from "../src/directives/Directives.ts"
import { MentalModelSource } from "../src/reflect/MentalModelSource.ts"
import { FormOpinionTask } from "../src/reflect/opinions/FormOpinion.ts"
import { OpinionStore } from "../src/reflect/opinions/OpinionStore.ts"
import { ReinforceAfterRetain, ReinforceOpinionTask } from "../src/reflect/opinions/ReinforceOpinion.ts"
import { Reflect } from "../src/reflect/Reflect.ts"

const Opinions = Layer.mergeAll(FormOpinionTask, ReinforceOpinionTask, ReinforceAfterRetain).pipe(
  Layer.provideMerge(OpinionStore.layer)
)

export const ReflectionLive = Layer.mergeAll(Reflect.layer, Opinions).pipe(
  Layer.provideMerge(Layer.mergeAll(Directives.layer, MentalModelSource.layer))
)

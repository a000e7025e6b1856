/**
 * Mental models and internet research wired: the mental-model store and API, the `refresh_mental_model` task
 * (which regenerates through reflect), the consolidation listener that refreshes models marked
 * `refresh_after_consolidation`, the knowledge base (pages are mental models in a tree), and the research service.
 * Built on top of reflection and the memory layers.
 */
import { Layer } from "effect"
import { ConsolidationRefresh } from "../src/mentalmodels/ConsolidationRefresh.ts"
import { MentalModelRefreshTask } from "../src/mentalmodels/MentalModelRefresh.ts"
import { MentalModels } from "../src/mentalmodels/MentalModels.ts"
import { MentalModelStore } from "../src/mentalmodels/MentalModelStore.ts"
import { InternetResearch } from "../src/research/InternetResearch.ts"
import { KnowledgeBase } from "../src/knowledge/KnowledgeBase.ts"

// Knowledge pages are mental models placed in a tree, so the knowledge base sits on the mental-model API.
const MentalModelsFeature = Layer.mergeAll(MentalModelRefreshTask, ConsolidationRefresh, KnowledgeBase.layer).pipe(
  Layer.provideMerge(MentalModels.layer),
  Layer.provideMerge(MentalModelStore.layer)
)

export const MentalModelsLive = Layer.mergeAll(MentalModelsFeature, InternetResearch.layer)

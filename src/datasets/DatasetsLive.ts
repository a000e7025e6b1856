/**
 * Dataset curation wired together: the store, datasets and sets, transforms and variants (which register their
 * background task types when built), retain into the bank and export. Needs the memory services (Retain), the
 * language model, the operations engine and the database.
 */
import { Layer } from "effect"
import { Datasets } from "./Datasets.ts"
import { DatasetStore } from "./DatasetStore.ts"
import { TasteExport } from "./TasteExport.ts"
import { TasteRetain } from "./TasteRetain.ts"
import { TasteTransforms } from "./TasteTransforms.ts"

export const DatasetsLive = Layer.mergeAll(TasteTransforms.layer, TasteRetain.layer, TasteExport.layer).pipe(
  Layer.provideMerge(Datasets.layer),
  Layer.provideMerge(DatasetStore.layer)
)

/** REST handlers for dataset curation: thin translations between the HTTP contract and the datasets services. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Datasets } from "../../datasets/Datasets.ts"
import { TasteExport } from "../../datasets/TasteExport.ts"
import { TasteRetain } from "../../datasets/TasteRetain.ts"
import { TasteTransforms } from "../../datasets/TasteTransforms.ts"
import { EngramApi } from "../api/Api.ts"
import { jsonWithListInPieces } from "../JsonAsIs.ts"
import { paging } from "./Paging.ts"

export const DatasetsHandlers = HttpApiBuilder.group(
  EngramApi,
  "datasets",
  Effect.fn(function*(handlers) {
    const datasets = yield* Datasets
    const transforms = yield* TasteTransforms
    const retain = yield* TasteRetain
    const exporter = yield* TasteExport

    return handlers.handleAll({
      catalog: () => exporter.catalog,
      listDatasets: ({ params }) => datasets.list(params.bank_id),
      createDataset: ({ params, payload }) => datasets.create(params.bank_id, payload),
      getDataset: ({ params }) => datasets.get(params.bank_id, params.dataset_id),
      updateDataset: ({ params, payload }) => datasets.update(params.bank_id, params.dataset_id, payload),
      deleteDataset: ({ params }) => datasets.remove(params.bank_id, params.dataset_id),
      listSets: ({ params, query }) =>
        datasets.listSets(params.bank_id, params.dataset_id, { ...paging(query), status: query.status }),
      // Up to 10,000 sets in one answer: streamed as it is serialised (see JsonAsIs).
      importSets: ({ params, payload }) =>
        Effect.map(
          datasets.importSets(params.bank_id, params.dataset_id, payload),
          (answer) => jsonWithListInPieces(answer, "sets")
        ),
      getSet: ({ params }) => datasets.getSet(params.bank_id, params.set_id),
      updateSet: ({ params, payload }) => datasets.updateSet(params.bank_id, params.set_id, payload),
      revertSet: ({ params }) => datasets.revert(params.bank_id, params.set_id),
      transform: ({ params, payload }) => transforms.transform(params.bank_id, payload),
      generate: ({ params, payload }) => transforms.generate(params.bank_id, params.dataset_id, payload),
      retainSets: ({ params, payload }) => retain.retain(params.bank_id, payload.set_ids),
      exportSets: ({ params, payload }) => exporter.export(params.bank_id, payload)
    })
  })
)

/** REST handlers for the knowledge base, over the `KnowledgeBase` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { defaultKnowledgeSearchLimit } from "../../domain/KnowledgeBase.ts"
import { KnowledgeBase } from "../../knowledge/KnowledgeBase.ts"
import { EngramApi } from "../api/Api.ts"

export const KnowledgeBaseHandlers = HttpApiBuilder.group(
  EngramApi,
  "knowledgeBase",
  Effect.fn(function*(handlers) {
    const knowledge = yield* KnowledgeBase
    return handlers.handleAll({
      tree: ({ params }) => knowledge.tree(params.bank_id),
      createFolder: ({ params, payload }) => knowledge.createFolder(params.bank_id, payload),
      createPage: ({ params, payload }) => knowledge.createPage(params.bank_id, payload),
      export: ({ params }) => knowledge.exportBundle(params.bank_id),
      search: ({ params, query }) =>
        knowledge.search(params.bank_id, query.q, query.limit ?? defaultKnowledgeSearchLimit),
      page: ({ params }) => knowledge.page(params.bank_id, params.page_id),
      deleteNode: ({ params }) => knowledge.remove(params.bank_id, params.node_id),
      updateNode: ({ params, payload }) => knowledge.update(params.bank_id, params.node_id, payload)
    })
  })
)

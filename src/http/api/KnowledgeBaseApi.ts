/** Knowledge-base routes: the tree, folders and pages, page reads, search, export, and node moves and deletes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import {
  CreateFolderRequest,
  CreateKnowledgePageResponse,
  CreatePageRequest,
  DeleteKnowledgeNodeResponse,
  KnowledgeNode,
  KnowledgePageBundleResponse,
  KnowledgePageResponse,
  KnowledgePageSearchResponse,
  KnowledgeSearchLimit,
  KnowledgeSearchQuery,
  KnowledgeTreeResponse,
  UpdateNodeRequest
} from "../../domain/KnowledgeBase.ts"

const base = "/v1/default/banks/:bank_id/knowledge-base"
const bank = { bank_id: BankId }
/** Path ids are looked up, not validated: an id that does not exist is a 404. */
const page = { bank_id: BankId, page_id: Schema.String }
const node = { bank_id: BankId, node_id: Schema.String }
const errors = [NotFound, ValidationError]

export class KnowledgeBaseApi extends HttpApiGroup.make("knowledgeBase")
  .add(
    HttpApiEndpoint.get("tree", `${base}/tree`, {
      params: bank,
      success: KnowledgeTreeResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "The knowledge base as a nested tree of folders and pages (without page bodies)."),
    HttpApiEndpoint.post("createFolder", `${base}/folders`, {
      params: bank,
      payload: CreateFolderRequest,
      success: KnowledgeNode.pipe(HttpApiSchema.status(201)),
      error: errors
    }).annotate(OpenApi.Description, "Create a folder, at the root or in `parent_id` (a folder)."),
    HttpApiEndpoint.post("createPage", `${base}/pages`, {
      params: bank,
      payload: CreatePageRequest,
      success: CreateKnowledgePageResponse.pipe(HttpApiSchema.status(201)),
      error: errors
    }).annotate(
      OpenApi.Description,
      "Create a page: a mental model answering `source_query`, placed in the tree. Its body is built in the " +
        "background; follow `operation_id`."
    ),
    HttpApiEndpoint.get("export", `${base}/export`, {
      params: bank,
      success: KnowledgePageBundleResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "A portable markdown bundle: `index.md` (the nested tree), `<page_id>.md` per page, `log/<page_id>.md` build history."
    ),
    HttpApiEndpoint.get("search", `${base}/search`, {
      params: bank,
      query: {
        q: KnowledgeSearchQuery.annotate({ description: "the words to look for" }),
        limit: Schema.optionalKey(KnowledgeSearchLimit.annotate({ description: "1-100, default 10" }))
      },
      success: KnowledgePageSearchResponse,
      error: errors
    }).annotate(OpenApi.Description, "Pages ranked by full-text relevance of their name, source query and body."),
    HttpApiEndpoint.get("page", `${base}/pages/:page_id`, {
      params: page,
      success: KnowledgePageResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "One page as a markdown document (frontmatter and body)."),
    HttpApiEndpoint.delete("deleteNode", `${base}/nodes/:node_id`, {
      params: node,
      success: DeleteKnowledgeNodeResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Delete a folder or page and its whole subtree, with the pages' mental models."),
    HttpApiEndpoint.patch("updateNode", `${base}/nodes/:node_id`, {
      params: node,
      payload: UpdateNodeRequest,
      success: KnowledgeNode,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Rename (`name`), move (`parent_id`; null: the root; never into its own subtree) or change a page's " +
        "`source_query`, `tags`, `max_tokens` (a new source query rebuilds the page)."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Knowledge base", description: "Folders and pages built from memories" }))
{}

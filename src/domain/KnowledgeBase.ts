/**
 * The knowledge base as clients see it (the field names of Hindsight's 0.9 client): a bank's tree of folders and
 * pages, where a page is a mental model with a place in the tree. Request bodies, the tree node, the page as a
 * markdown document, search hits and the export bundle.
 */
import { Schema } from "effect"
import { MentalModelMaxTokens, MentalModelTriggerInput } from "./MentalModel.ts"

/** Node names are shown as titles and used as file names in exports: one line of readable text. */
export const KnowledgeNodeName = Schema.String.check(
  Schema.makeFilter((value: string) => value.trim() !== "" || "must not be empty"),
  Schema.isMaxLength(200),
  Schema.makeFilter((value: string) => !/[\r\n]/.test(value) || "must be a single line")
)

const SourceQuery = Schema.String.check(
  Schema.makeFilter((value: string) => value.trim() !== "" || "must not be empty"),
  Schema.isMaxLength(4000)
)

const Tags = Schema.Array(Schema.String)

/** A node id as a request names it; ids are looked up, so one that breaks no rule but does not exist is a 4xx later. */
export const KnowledgeNodeId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128))

export const CreateFolderRequest = Schema.Struct({
  name: KnowledgeNodeName,
  parent_id: Schema.optionalKey(
    Schema.NullOr(KnowledgeNodeId).annotate({
      description: "the folder to create it in; absent or null: at the root"
    })
  )
}).annotate({ identifier: "CreateFolderRequest" })
export type CreateFolderRequest = typeof CreateFolderRequest.Type

export const CreatePageRequest = Schema.Struct({
  name: KnowledgeNodeName,
  source_query: SourceQuery.annotate({ description: "the question the page answers; its body is regenerated from it" }),
  parent_id: Schema.optionalKey(Schema.NullOr(KnowledgeNodeId)),
  tags: Schema.optionalKey(
    Schema.NullOr(Tags).annotate({
      description: "memories the page is built from; a `type:<x>` tag also sets the page's type"
    })
  ),
  max_tokens: Schema.optionalKey(Schema.NullOr(MentalModelMaxTokens)),
  trigger: Schema.optionalKey(
    Schema.NullOr(MentalModelTriggerInput).annotate({
      description: "absent: pages default to delta refreshes after every consolidation"
    })
  )
}).annotate({ identifier: "CreatePageRequest" })
export type CreatePageRequest = typeof CreatePageRequest.Type

/** Absent fields are unchanged; `parent_id: null` moves the node to the root. Page options refuse folders. */
export const UpdateNodeRequest = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(KnowledgeNodeName)),
  parent_id: Schema.optionalKey(Schema.NullOr(KnowledgeNodeId)),
  source_query: Schema.optionalKey(Schema.NullOr(SourceQuery)),
  tags: Schema.optionalKey(Schema.NullOr(Tags)),
  max_tokens: Schema.optionalKey(Schema.NullOr(MentalModelMaxTokens))
}).annotate({ identifier: "UpdateNodeRequest" })
export type UpdateNodeRequest = typeof UpdateNodeRequest.Type

export const KnowledgeNodeKind = Schema.Literals(["folder", "page"])
export type KnowledgeNodeKind = typeof KnowledgeNodeKind.Type

export interface KnowledgeNode {
  readonly id: string
  readonly kind: KnowledgeNodeKind
  readonly name: string
  readonly parent_id: string | null
  readonly mental_model_id: string | null
  readonly managed: boolean
  readonly description: string | null
  readonly tags: ReadonlyArray<string>
  readonly timestamp: string | null
  readonly is_stale: boolean | null
  readonly children?: ReadonlyArray<KnowledgeNode>
}

export const KnowledgeNode = Schema.Struct({
  id: Schema.String,
  kind: KnowledgeNodeKind,
  name: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  mental_model_id: Schema.NullOr(Schema.String).annotate({ description: "the page's mental model (pages only)" }),
  managed: Schema.Boolean,
  description: Schema.NullOr(Schema.String).annotate({ description: "a page's source query" }),
  tags: Tags,
  timestamp: Schema.NullOr(Schema.String).annotate({ description: "last refresh (page) or last update (folder)" }),
  is_stale: Schema.NullOr(Schema.Boolean).annotate({
    description: "pages in the tree: false when nothing was written to the bank since the last refresh"
  }),
  children: Schema.optionalKey(Schema.Array(Schema.suspend((): Schema.Codec<KnowledgeNode> => KnowledgeNode)))
}).annotate({ identifier: "KnowledgeNode" })

export const KnowledgeTreeResponse = Schema.Struct({
  roots: Schema.Array(KnowledgeNode)
}).annotate({ identifier: "KnowledgeTreeResponse" })

export const CreateKnowledgePageResponse = Schema.Struct({
  page_id: Schema.String,
  mental_model_id: Schema.String,
  operation_id: Schema.NullOr(Schema.String).annotate({
    description: "the first build, a refresh_mental_model operation"
  })
}).annotate({ identifier: "CreateKnowledgePageResponse" })
export type CreateKnowledgePageResponse = typeof CreateKnowledgePageResponse.Type

export const KnowledgePageResponse = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String.annotate({ description: "from a `type:<x>` tag, else `knowledge-page`" }),
  description: Schema.NullOr(Schema.String),
  tags: Tags,
  timestamp: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String).annotate({ description: "the generated markdown; null until the first build" }),
  markdown: Schema.String.annotate({ description: "YAML frontmatter and the body" })
}).annotate({ identifier: "KnowledgePageResponse" })
export type KnowledgePageResponse = typeof KnowledgePageResponse.Type

export const KnowledgePageSearchResult = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mental_model_id: Schema.NullOr(Schema.String),
  snippet: Schema.String,
  score: Schema.Number,
  updated_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "KnowledgePageSearchResult" })
export type KnowledgePageSearchResult = typeof KnowledgePageSearchResult.Type

export const KnowledgePageSearchResponse = Schema.Struct({
  results: Schema.Array(KnowledgePageSearchResult),
  total: Schema.Int
}).annotate({ identifier: "KnowledgePageSearchResponse" })

export const KnowledgeSearchLimit = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))
export const defaultKnowledgeSearchLimit = 10

export const KnowledgeSearchQuery = Schema.String.check(
  Schema.makeFilter((value: string) => value.trim() !== "" || "must not be empty"),
  Schema.isMaxLength(1000)
)

export const KnowledgePageBundleFile = Schema.Struct({
  path: Schema.String,
  content: Schema.String
}).annotate({ identifier: "KnowledgePageBundleFile" })
export type KnowledgePageBundleFile = typeof KnowledgePageBundleFile.Type

export const KnowledgePageBundleResponse = Schema.Struct({
  files: Schema.Array(KnowledgePageBundleFile)
}).annotate({ identifier: "KnowledgePageBundleResponse" })

export const DeleteKnowledgeNodeResponse = Schema.Struct({
  success: Schema.Boolean,
  node_id: Schema.String,
  deleted_count: Schema.Int.annotate({ description: "nodes removed: the node and its whole subtree" }),
  deleted_pages: Schema.Int.annotate({ description: "pages among them (their mental models are removed too)" })
}).annotate({ identifier: "DeleteKnowledgeNodeResponse" })
export type DeleteKnowledgeNodeResponse = typeof DeleteKnowledgeNodeResponse.Type

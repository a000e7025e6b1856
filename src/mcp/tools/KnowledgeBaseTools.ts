/**
 * MCP tools for the knowledge base: the tree of folders and pages (pages are mental models placed in it), reading
 * and searching pages, exporting the whole base as markdown, and creating, moving, renaming and deleting nodes.
 * They call `KnowledgeBase`, as the REST handlers do, with the REST request schemas as their arguments.
 */
import { Effect } from "effect"
import {
  CreateFolderRequest,
  CreatePageRequest,
  defaultKnowledgeSearchLimit,
  KnowledgeNodeId,
  KnowledgeSearchLimit,
  KnowledgeSearchQuery,
  UpdateNodeRequest
} from "../../domain/KnowledgeBase.ts"
import { KnowledgeBase } from "../../knowledge/KnowledgeBase.ts"
import { defineTool, described, withDefault } from "../McpTool.ts"

const nodeId = { node_id: described(KnowledgeNodeId, "The folder's or page's id (see get_knowledge_tree).") }
const pageTags = "Tags of the memories the page is built from; a `type:<x>` tag also sets the page's type."

export const knowledgeBaseTools = Effect.gen(function*() {
  const knowledge = yield* KnowledgeBase

  return [
    defineTool({
      name: "get_knowledge_tree",
      title: "Show the knowledge base",
      description: "Show the bank's knowledge base as a nested tree of folders and pages (ids, names, each page's " +
        "question and whether it may be stale). Read a page's text with get_knowledge_page.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => knowledge.tree(bankId)
    }),
    defineTool({
      name: "create_knowledge_folder",
      title: "Create a knowledge folder",
      description: "Create a folder in the knowledge base, at the root or inside another folder (`parent_id`).",
      fields: {
        name: described(CreateFolderRequest.fields.name, "The folder's name (one line)."),
        parent_id: described(CreateFolderRequest.fields.parent_id, "The folder to create it in; omit for the root.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, args) => knowledge.createFolder(bankId, args)
    }),
    defineTool({
      name: "create_knowledge_page",
      title: "Create a knowledge page",
      description: "Create a knowledge page: a living markdown page answering `source_query` from the bank's " +
        "memories (e.g. 'What are the team's deployment practices?'), kept current after each consolidation. Its " +
        "body is written in the background; the result has the `operation_id` to follow with get_operation.",
      fields: {
        name: described(CreatePageRequest.fields.name, "The page's title (one line)."),
        source_query: described(CreatePageRequest.fields.source_query, "The question the page answers."),
        parent_id: described(CreatePageRequest.fields.parent_id, "The folder to put it in; omit for the root."),
        tags: described(CreatePageRequest.fields.tags, pageTags),
        max_tokens: described(CreatePageRequest.fields.max_tokens, "Maximum length of the body in tokens (256-8192).")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, args) => knowledge.createPage(bankId, args)
    }),
    defineTool({
      name: "get_knowledge_page",
      title: "Read a knowledge page",
      description: "Read one knowledge page: its markdown body (null until first built), question, tags and type, " +
        "and the whole page as a markdown document with frontmatter.",
      fields: {
        page_id: described(KnowledgeNodeId, "The page's id (see get_knowledge_tree or search_knowledge_base).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { page_id }) => knowledge.page(bankId, page_id)
    }),
    defineTool({
      name: "search_knowledge_base",
      title: "Search the knowledge base",
      description: "Find knowledge pages by words in their name, question or body, best first, with a snippet each.",
      fields: {
        query: described(KnowledgeSearchQuery, "The words to look for."),
        limit: withDefault(KnowledgeSearchLimit, defaultKnowledgeSearchLimit, "How many pages to return (1-100).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { query, limit }) => knowledge.search(bankId, query, limit)
    }),
    defineTool({
      name: "export_knowledge_base",
      title: "Export the knowledge base",
      description: "Export the whole knowledge base as markdown files: `index.md` (the nested tree), one " +
        "`<page_id>.md` per page, and `log/<page_id>.md` with each page's build history.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => knowledge.exportBundle(bankId)
    }),
    defineTool({
      name: "update_knowledge_node",
      title: "Rename, move or change a knowledge node",
      description: "Rename a folder or page (`name`), move it (`parent_id`: a folder, or null for the root; a folder " +
        "cannot move into its own subtree), or change a page's question, tags or length. A new question rebuilds " +
        "the page in the background. Only the given fields change.",
      fields: {
        ...nodeId,
        name: described(UpdateNodeRequest.fields.name, "New name."),
        parent_id: described(
          UpdateNodeRequest.fields.parent_id,
          "The folder to move it into; null moves it to the root."
        ),
        source_query: described(UpdateNodeRequest.fields.source_query, "Pages only: the new question."),
        tags: described(UpdateNodeRequest.fields.tags, `Pages only: ${pageTags}`),
        max_tokens: described(UpdateNodeRequest.fields.max_tokens, "Pages only: maximum length in tokens (256-8192).")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { node_id, ...changes }) => knowledge.update(bankId, node_id, changes)
    }),
    defineTool({
      name: "delete_knowledge_node",
      title: "Delete a knowledge node",
      description:
        "Delete a folder or page and everything under it; the deleted pages' mental models go too. Irreversible.",
      fields: nodeId,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { node_id }) => knowledge.remove(bankId, node_id)
    })
  ]
})

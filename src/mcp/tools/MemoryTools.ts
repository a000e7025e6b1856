/**
 * MCP tools that write and read memories: retain, recall, reflect, and listing, reading, deleting and clearing
 * memory units. They call `Retain`, `Recall`, `Reflect` and `MemoryUnits` exactly as the REST handlers do; the tool
 * defaults that differ from REST (recall budget `high`, retain context `general`) are applied here.
 */
import { Effect, Schema } from "effect"
import { MemoryItem } from "../../domain/Memory.ts"
import { FactType } from "../../domain/Memory.ts"
import { RecallRequest } from "../../domain/Recall.ts"
import { ReflectRequest } from "../../domain/Reflect.ts"
import { Limit, Offset } from "../../http/api/MemoriesApi.ts"
import { UpdateMemoryRequest } from "../../domain/MemoryOps.ts"
import { MemoryCuration } from "../../memory/curation/MemoryCuration.ts"
import { MemoryUnits } from "../../memory/MemoryUnits.ts"
import { Recall } from "../../memory/recall/Recall.ts"
import { Retain } from "../../memory/retain/Retain.ts"
import { usageJson } from "../../models/Llm.ts"
import { Reflect } from "../../reflect/Reflect.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

const tagsField = described(
  RecallRequest.fields.tags,
  "Only read memories carrying these tags (e.g. a user or project id given at retain)."
)
const tagsMatchField = withDefault(
  RecallRequest.fields.tags_match,
  "any",
  "`any`: a memory needs one of the tags; `all`: every tag (the `_strict` variants also exclude untagged memories)."
)

export const memoryTools = Effect.gen(function*() {
  const retain = yield* Retain
  const recall = yield* Recall
  const reflect = yield* Reflect
  const units = yield* MemoryUnits
  const curation = yield* MemoryCuration
  const repos = yield* MemoryRepos
  // Like `branch_name` on the REST reads: a memory repo branch's workspace, read without checking it out.
  const branchField = optional(
    Schema.String,
    "Read this memory repo branch instead of the bank's active one, without checking it out; unknown → error."
  )

  return [
    defineTool({
      name: "retain",
      title: "Remember information",
      description: "Store information in the memory bank so it can be recalled later. Facts, entities and dates are " +
        "extracted from `content` and linked to what the bank already knows. Use it for anything worth remembering " +
        "about the user, the project or the world: preferences, decisions, events, conversation excerpts.",
      fields: {
        content: described(MemoryItem.fields.content, "The information to remember, self-contained (who, what, when)."),
        context: withDefault(
          Schema.String,
          "general",
          "What the content is or where it comes from (e.g. 'conversation with Alice', 'meeting notes'); " +
            "guides extraction."
        ),
        timestamp: described(
          MemoryItem.fields.timestamp,
          "When it happened, ISO 8601 (e.g. 2024-05-07T14:30:00Z); default now; \"unset\" for timeless facts."
        ),
        tags: described(
          MemoryItem.fields.tags,
          "Labels to scope later recall and reflect (e.g. a user or project id)."
        ),
        metadata: described(MemoryItem.fields.metadata, "String key/value pairs stored with the memories."),
        document_id: described(
          MemoryItem.fields.document_id,
          "Groups the memories into a document; retaining again with the same id replaces that document's memories."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { content, ...item }) =>
        Effect.map(retain.retainNow(bankId, { items: [{ content, ...item }] }), (outcome) => ({
          success: true,
          bank_id: bankId,
          memories_created: outcome.created,
          duplicates_skipped: outcome.duplicates,
          usage: usageJson(outcome.usage)
        }))
    }),
    defineTool({
      name: "recall",
      title: "Search memories",
      description: "Search the memory bank for memories relevant to a question or topic (semantic, keyword, entity " +
        "graph and time-aware search, fused and ranked). Use it before answering anything that may depend on what " +
        "was retained earlier. Returns the memories with their dates, entities and tags.",
      fields: {
        query: described(RecallRequest.fields.query, "What to look for, as a question or keywords."),
        max_tokens: withDefault(RecallRequest.fields.max_tokens, 4096, "Token budget of the returned memories."),
        budget: withDefault(
          RecallRequest.fields.budget,
          "high",
          "How thoroughly to search: `low` (fastest), `mid`, `high` (most thorough)."
        ),
        types: described(
          RecallRequest.fields.types,
          "Kinds of memory to search: `world` (facts), `experience` (what the agent did or saw), `opinion`, " +
            "`observation` (consolidated); default all."
        ),
        tags: tagsField,
        tags_match: tagsMatchField,
        query_timestamp: described(
          RecallRequest.fields.query_timestamp,
          "The 'now' of the question, ISO 8601, so that 'last week' resolves against it; default now."
        ),
        branch_name: branchField
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { branch_name, ...args }) =>
        Effect.flatMap(repos.readBank(bankId, branch_name), (readBank) => recall.recall(readBank, args))
    }),
    defineTool({
      name: "reflect",
      title: "Answer from memory",
      description: "Answer a question by reasoning over the bank's memories, mental models and directives under the " +
        "bank's mission and disposition. Use it for questions that need synthesis (summaries, advice, \"what do we " +
        "know about...\") rather than a list of memories. Returns the answer as markdown text.",
      fields: {
        query: described(ReflectRequest.fields.query, "The question to answer."),
        context: described(
          ReflectRequest.fields.context,
          "Extra context for the question (appended to it), e.g. what the user is working on."
        ),
        budget: withDefault(
          ReflectRequest.fields.budget,
          "low",
          "How much the bank may search before answering: `low` (fastest), `mid`, `high`."
        ),
        max_tokens: withDefault(ReflectRequest.fields.max_tokens, 4096, "Maximum tokens of the answer."),
        response_schema: described(
          ReflectRequest.fields.response_schema,
          "A JSON Schema object; the answer then also comes as `structured_output` matching it."
        ),
        tags: tagsField,
        tags_match: tagsMatchField,
        branch_name: branchField
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { branch_name, ...args }) =>
        Effect.flatMap(repos.readBank(bankId, branch_name), (readBank) => reflect.reflect(readBank, args))
    }),
    defineTool({
      name: "list_memories",
      title: "List memories",
      description: "List the bank's memories, newest first, optionally of one type or containing some text. Use it " +
        "to browse or audit what is stored; use `recall` to search by meaning.",
      fields: {
        type: optional(FactType, "Only memories of this type: `world`, `experience`, `observation` or `opinion`."),
        q: optional(Schema.String, "Only memories whose text contains this (case-insensitive)."),
        limit: withDefault(Limit, 100, "How many memories to return (1-1000)."),
        offset: withDefault(Offset, 0, "How many to skip, for paging."),
        branch_name: branchField
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { limit, offset, branch_name, ...filter }) =>
        Effect.flatMap(
          repos.readBank(bankId, branch_name),
          (readBank) =>
            Effect.map(units.list(readBank, { ...filter, limit, offset }), (page) => ({ ...page, limit, offset }))
        )
    }),
    defineTool({
      name: "get_memory",
      title: "Read a memory",
      description: "Read one memory by id (as returned by recall or list_memories), with its dates, entities, tags " +
        "and source.",
      fields: { memory_id: described(Schema.String, "The memory's id."), branch_name: branchField },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { memory_id, branch_name }) =>
        Effect.flatMap(repos.readBank(bankId, branch_name), (readBank) => units.get(readBank, memory_id))
    }),
    defineTool({
      name: "update_memory",
      title: "Correct or retire a memory",
      description: "Curate one world or experience fact (observations are derived and rebuild themselves): fix its " +
        "text, context, occurred dates (\"\" clears one), fact type or entities, or set `state` to `invalidated` " +
        "(with a `reason`) when it is no longer true — it leaves recall but is kept for audit — and to `valid` to " +
        "restore it. Prefer this to delete_memory when the user says something changed.",
      fields: {
        memory_id: described(Schema.String, "The memory's id."),
        text: described(UpdateMemoryRequest.fields.text, "The corrected statement (re-embedded and relinked)."),
        context: described(UpdateMemoryRequest.fields.context, "New context; \"\" clears it."),
        occurred_start: described(UpdateMemoryRequest.fields.occurred_start, "When it started, ISO 8601; \"\" clears."),
        occurred_end: described(UpdateMemoryRequest.fields.occurred_end, "When it ended, ISO 8601; \"\" clears."),
        fact_type: described(UpdateMemoryRequest.fields.fact_type, "Reclassify: world or experience."),
        entities: described(
          UpdateMemoryRequest.fields.entities,
          "Replace its entities with these names (taken literally)."
        ),
        state: described(
          UpdateMemoryRequest.fields.state,
          "`invalidated` retires it (reversible); `valid` restores it."
        ),
        reason: described(UpdateMemoryRequest.fields.reason, "Why it was invalidated, kept with it.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { memory_id, ...request }) => curation.update(bankId, memory_id, request)
    }),
    defineTool({
      name: "delete_memory",
      title: "Delete a memory",
      description: "Delete one memory by id, e.g. a fact that is wrong or that the user asked to forget.",
      fields: { memory_id: described(Schema.String, "The memory's id.") },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { memory_id }) =>
        Effect.as(units.remove(bankId, memory_id), { success: true, message: `memory '${memory_id}' deleted` })
    }),
    defineTool({
      name: "clear_memories",
      title: "Clear memories",
      description: "Delete the bank's memories: all of them (with their documents), or only those of one type. The " +
        "bank itself, its profile, mental models and directives are kept. Irreversible.",
      fields: { type: optional(FactType, "Only clear memories of this type; omitted clears all.") },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: (bankId, { type }) =>
        Effect.map(units.clear(bankId, type), (deleted) => ({
          success: true,
          message: `deleted ${deleted} ${type === undefined ? "" : `${type} `}memories`,
          deleted_count: deleted
        }))
    })
  ]
})

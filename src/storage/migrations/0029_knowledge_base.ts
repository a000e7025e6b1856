/**
 * The knowledge base: a bank's tree of folders and pages. A page is a node backed by a mental model (its body is the
 * model's content), so deleting the model removes the page. `parent_id` has no foreign key on purpose: memory repos
 * restore a table's rows in batches that may name a parent before it is inserted, so the tree's integrity (parent
 * exists, is a folder, no cycle, subtree deletion) is kept by `KnowledgeBase` inside one transaction instead.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE knowledge_nodes (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('folder', 'page')),
      name text NOT NULL,
      parent_id text,
      mental_model_id text,
      managed boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((kind = 'page') = (mental_model_id IS NOT NULL)),
      FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models (bank_id, id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX knowledge_nodes_bank_parent ON knowledge_nodes (bank_id, parent_id)`
  yield* sql`CREATE INDEX knowledge_nodes_model ON knowledge_nodes (bank_id, mental_model_id)`
})

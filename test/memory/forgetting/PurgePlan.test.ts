/**
 * The history purge's plan (`PurgePlan.ts`), made before the forget's transaction in slices, both tiers: while the
 * repo has not moved the transaction uses it, and it rewrites exactly what a plan made inside the transaction does;
 * when a commit lands between the plan and the transaction, the transaction plans again and the new commit's copy of
 * the content goes too; another bank's statements run between the plan's slices; and the objects a tree outside the
 * repo still names (here another repo's commit sharing the purged repo's first tree) are kept, the others deleted.
 */
import { assert, layer } from "@effect/vitest"
import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { purgeHistory } from "../../../src/memory/forgetting/HistoryPurge.ts"
import { planPurge, type PurgeSelection } from "../../../src/memory/forgetting/PurgePlan.ts"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"

/** Each test forgets its own person: the tests share one database, and the first leaves its history as it was. */
const about = (name: string, what: string) => ({ content: `${name} Hartwell ${what}`, entities: [{ text: name }] })
const bySelectors = (name: string): PurgeSelection => ({
  memoryIds: [],
  entityIds: [],
  chunkIds: [],
  documentIds: [],
  entity: name,
  requestedIds: [],
  documentId: null,
  tag: null
})

class RolledBack extends Data.TaggedError("RolledBack")<{ readonly value: unknown }> {}

layer(testApp(), { excludeTestServices: true, timeout: "4 minutes" })("purge_history's plan", (it) => {
  /** A bank with a repo of three commits, each adding memories about the entity and others. */
  const versioned = (bankId: string, name: string, others: number) =>
    Effect.gen(function*() {
      const retain = (items: ReadonlyArray<unknown>) =>
        Effect.andThen(ok("POST", `${bankPath(bankId)}/memories`, { items }), settled(bankId))
      const filler = (round: number) =>
        Array.from({ length: others }, (_, i) => ({
          content: `Marguerite ${round}-${i} waters plant number ${i} on shelf ${round} every Monday.`
        }))
      yield* retain([about(name, "keeps the spare key under the blue flowerpot."), ...filler(1)])
      const repoId = (yield* ok("POST", `${bankPath(bankId)}/repos/enable`, {})).body.repo_id as string
      for (const [round, what] of [[2, "moved to Lisbon in March."], [3, "plays the cello on Fridays."]] as const) {
        yield* retain([about(name, what), ...filler(round)])
        yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: `round ${round}` })
      }
      return repoId
    })
  const objectsNaming = (name: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM repo_objects
      WHERE kind = 'row' AND body::text ILIKE ${`%${name}%`}`
      return rows[0]!.n
    })

  it.effect("a plan made ahead is used while the repo stands still, and rewrites what one made inside does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* versioned("planned-still", "Quillon", 5)
      const selection = bySelectors("Quillon")
      const rolledBack = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        effect.pipe(
          Effect.flatMap((value) => Effect.fail(new RolledBack({ value }))),
          sql.withTransaction,
          Effect.catchTag("RolledBack", (e) => Effect.succeed((e as RolledBack).value as A))
        )
      let slices = 0
      const ahead = yield* planPurge("planned-still", selection, () => Effect.sync(() => slices++))
      assert.isNotNull(ahead)
      const used = yield* rolledBack(purgeHistory("planned-still", selection, ahead))
      const inside = yield* rolledBack(purgeHistory("planned-still", selection, null))
      assert.isTrue(used.plannedAhead, "the transaction planned again though nothing had moved")
      assert.isFalse(inside.plannedAhead)
      assert.isAbove(used.rewrites.length, 0)
      assert.deepStrictEqual(used.rewrites, inside.rewrites)
      assert.deepStrictEqual(used.holding, inside.holding)
      assert.strictEqual(used.objectsDeleted, inside.objectsDeleted)
      assert.isAbove(slices, 3, "the plan's reads were not sliced")
      // Both rolled back: the history still holds the content.
      assert.isAbove(yield* objectsNaming("Quillon"), 0)
    }))

  it.effect("a commit between the plan and the transaction makes it plan again, and that commit is purged too", () =>
    Effect.gen(function*() {
      const repoId = yield* versioned("planned-moved", "Ottoline", 2)
      const selection = bySelectors("Ottoline")
      const ahead = yield* planPurge("planned-moved", selection, () => Effect.void)
      yield* ok("POST", `${bankPath("planned-moved")}/memories`, { items: [about("Ottoline", "adopted a grey cat.")] })
      yield* settled("planned-moved")
      const late = (yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "late" })).body
      const sql = yield* SqlClient.SqlClient
      const outcome = yield* sql.withTransaction(purgeHistory("planned-moved", selection, ahead))
      assert.isFalse(outcome.plannedAhead, "a plan of trees the repo no longer has was used")
      assert.include(outcome.holding, late.commit_id as string)
      assert.strictEqual(yield* objectsNaming("Ottoline"), 0, "a commit's copy of the content is still stored")
    }))

  it.effect("another bank's statements run between the plan's slices", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* versioned("planned-busy", "Perpetua", 40)
      yield* ok("POST", `${bankPath("planned-other")}/memories`, { items: [{ content: "Bram bakes bread." }] })
      yield* settled("planned-other")
      // Each pause between slices lets one statement of the other bank through before the next slice starts.
      const between: Array<number> = []
      yield* planPurge("planned-busy", bySelectors("Perpetua"), () =>
        Effect.gen(function*() {
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
            WHERE bank_id = 'planned-other'`
          between.push(rows[0]!.n)
        }).pipe(Effect.orDie))
      assert.isAbove(between.length, 3)
      assert.isTrue(between.every((n) => n === 1))
    }))

  it.effect("objects a tree outside the repo names are kept: that tree stays whole, the rest is deleted", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repoId = yield* versioned("planned-shared", "Tiberius", 3)
      // Another repo whose commit shares the purged repo's first tree, as repos sharing objects by hash do.
      yield* ok("POST", `${bankPath("planned-sharer")}/memories`, { items: [{ content: "Bram bakes bread." }] })
      yield* settled("planned-sharer")
      const otherRepo = (yield* ok("POST", `${bankPath("planned-sharer")}/repos/enable`, {})).body.repo_id as string
      yield* sql`INSERT INTO repo_commits (commit_id, repo_id, parent_commit_id, branch_name, message, actor, root_hash,
          tables, row_counts, bytes_added)
        SELECT 'shared-tree-commit', ${otherRepo}, NULL, 'main', 'shares a tree', 'test', root_hash, tables, row_counts, 0
        FROM repo_commits WHERE repo_id = ${repoId} ORDER BY created_at LIMIT 1`
      const missing = Effect.map(
        sql<
          { n: number }
        >`WITH m AS (SELECT e.value AS h FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e
            WHERE c.commit_id = 'shared-tree-commit'),
          tops AS (SELECT t.value AS h FROM m JOIN repo_objects o ON o.hash = m.h CROSS JOIN LATERAL jsonb_each_text(o.body) t),
          leaves AS (SELECT h FROM tops UNION SELECT l.value FROM tops JOIN repo_objects o ON o.hash = tops.h AND o.kind = 'node'
            CROSS JOIN LATERAL jsonb_each_text(o.body) l),
          rows AS (SELECT r.value AS h FROM leaves JOIN repo_objects o ON o.hash = leaves.h AND o.kind = 'bucket'
            CROSS JOIN LATERAL jsonb_each_text(o.body) r),
          named AS (SELECT h FROM m UNION SELECT h FROM tops UNION SELECT h FROM leaves UNION SELECT h FROM rows)
          SELECT count(*)::int AS n FROM named WHERE NOT EXISTS (SELECT 1 FROM repo_objects o WHERE o.hash = named.h)`,
        (rows) => rows[0]!.n
      )
      assert.strictEqual(yield* missing, 0)
      const report = (yield* ok("POST", `${bankPath("planned-shared")}/forget`, {
        entity: "Tiberius",
        purge_history: true
      })).body
      assert.isAbove(report.repo_commits.objects_deleted, 0)
      assert.strictEqual(yield* missing, 0, "the other repo's commit lost objects of its tree")
    }))
})

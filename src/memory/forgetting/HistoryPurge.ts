/**
 * `purge_history`: the one operation that rewrites memory repo history. Inside the forget's transaction (so the live
 * forget and the rewrite commit together or not at all) it writes what a plan found (`PurgePlan.ts`: the new leaves,
 * nodes and table manifests without the forgotten rows), gives every commit whose tree changed (and every commit
 * after it: its parent changed) a new id, moves branch heads and stashes to the new trees, drops read copies that held
 * the content, and deletes the replaced objects that no other repo still names. The plan is made before the
 * transaction, in slices; a plan the repo or the selection has moved on from since is made again here, whole.
 * Must not log or return content; must not collect garbage in general (only the objects it replaced).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { createHash } from "node:crypto"
import { rootHashOf } from "../../repos/Snapshots.ts"
import { objectsLockExclusive } from "../../repos/ObjectsLock.ts"
import { dropHiddenBank, workspacePrefix } from "../../repos/RepoStore.ts"
import { namedElsewhere } from "../../repos/NamedElsewhere.ts"
import { readCopyMark } from "../../repos/SlicedFork.ts"
import { type CommitRow, planPurge, type PurgePlan, type PurgeSelection, readTrees, stillHolds } from "./PurgePlan.ts"

export type { PurgeSelection } from "./PurgePlan.ts"

export interface PurgeOutcome {
  /** Commits whose tree held forgotten rows. */
  readonly holding: ReadonlyArray<string>
  readonly rewrites: ReadonlyArray<{ readonly old_commit_id: string; readonly new_commit_id: string }>
  readonly objectsDeleted: number
  readonly readCopiesDropped: number
  /** The plan made before the transaction was used (false: it was made again inside, the repo having moved on). */
  readonly plannedAhead: boolean
}

/** The repo is still building its first commit (its staged rows are not in any tree yet). */
export class RepoEnabling extends Error {}

/** A commit id for a rewritten commit, from what it now is: the same rewrite gives the same id (a dry run's are exact). */
const rewrittenId = (oldId: string, rootHash: string, parent: string | null) => {
  const hex = createHash("sha256").update(`${oldId}\n${rootHash}\n${parent ?? ""}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * In the forget's transaction: purges `selection` from the history of `bankId`'s repo with `prepared` (made before the
 * transaction by `planPurge`) while it still holds, otherwise with a plan made here.
 */
export const purgeHistory = Effect.fn("Forgetting.purgeHistory")(function*(
  bankId: string,
  selection: PurgeSelection,
  prepared: PurgePlan | null
) {
  const sql = yield* SqlClient.SqlClient
  const run = <A extends object = Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) =>
    sql.unsafe<A>(text, params)
  const none: PurgeOutcome = { holding: [], rewrites: [], objectsDeleted: 0, readCopiesDropped: 0, plannedAhead: true }
  const repos = yield* run<{ repoId: string; enableProgress: unknown }>(
    `SELECT repo_id, enable_progress FROM memory_repos WHERE root_bank_id = $1 FOR UPDATE`,
    [bankId]
  )
  const repo = repos[0]
  if (repo === undefined) return none
  if (repo.enableProgress !== null) return yield* Effect.die(new RepoEnabling())
  const repoId = repo.repoId
  // A read copy being made (in slices, `MemoryRepos.firstCopy`) copies an old tree: it stops, its part-made bank goes.
  // Before the objects lock: a slice holds its job row while it waits for that lock (shared).
  const copying = yield* run<{ target_bank_id: string }>(
    `DELETE FROM repo_forks WHERE source_repo_id = $1 AND (request ->> $2)::boolean RETURNING target_bank_id`,
    [repoId, readCopyMark]
  )
  // Exclusive: no transaction stores objects (which may be the ones deleted below) until this one ends.
  yield* run(objectsLockExclusive)
  const trees = yield* readTrees(repoId)
  const holds = prepared !== null && stillHolds(prepared, trees, selection) && (yield* stillStored(prepared))
  const plan = holds ? prepared : yield* planPurge(bankId, selection, () => Effect.void)
  if (plan === null) return none
  const { branches, commits } = plan.trees
  const { removedOf, replaced } = plan

  if (plan.newObjects.length > 0) {
    // Bodies as JSON text: a rewritten row's as PostgreSQL printed it (its hash is of that text).
    yield* run(
      `INSERT INTO repo_objects (hash, kind, body, size_bytes)
       SELECT DISTINCT ON (e ->> 'hash') e ->> 'hash', e ->> 'kind', b.body, octet_length(b.body::text)
       FROM jsonb_array_elements($1::jsonb) e CROSS JOIN LATERAL (SELECT (e ->> 'body')::jsonb AS body) b
       ON CONFLICT (hash) DO NOTHING`,
      [JSON.stringify(plan.newObjects)]
    )
  }

  // A row the history lost but the bank still holds (derived state the live forget keeps) must not fall out of the
  // next commit unseen: its key is logged, and status and commit compare it (a key whose row is gone stays clean).
  if (plan.touchedKeys.length > 0) {
    yield* run(
      `INSERT INTO repo_dirty_keys (bank_id, table_name, k)
       SELECT $1, e ->> 0, e ->> 1 FROM jsonb_array_elements($2::jsonb) e ON CONFLICT DO NOTHING`,
      [bankId, JSON.stringify(plan.touchedKeys)]
    )
  }

  /** A tree (and its row counts) with the replaced manifests; `changed` when any was. */
  const rewriteTree = (tables: Record<string, string>, counts: Record<string, number> | null) => {
    const next: Record<string, string> = {}
    const rows: Record<string, number> = { ...(counts ?? {}) }
    let changed = false
    for (const [table, hash] of Object.entries(tables)) {
      if (!replaced.has(hash)) {
        next[table] = hash
        continue
      }
      changed = true
      const to = replaced.get(hash)!
      if (to === null) delete rows[table]
      else {
        next[table] = to
        if (rows[table] !== undefined) rows[table] = Math.max(0, rows[table] - (removedOf.get(hash) ?? 0))
      }
    }
    return { tables: next, rows, changed }
  }

  // Commits, parents first: a commit whose tree or parent changed is stored again under a new id.
  const newIds = new Map<string, string>()
  const holding: Array<string> = []
  const byId = new Map(commits.map((c) => [c.commitId, c]))
  const visit = (commit: CommitRow): Effect.Effect<string, SqlError> =>
    Effect.gen(function*() {
      const done = newIds.get(commit.commitId)
      if (done !== undefined) return done
      const parentRow = commit.parentCommitId === null ? undefined : byId.get(commit.parentCommitId)
      const parent = parentRow === undefined ? commit.parentCommitId : yield* visit(parentRow)
      const tree = rewriteTree(commit.tables, commit.rowCounts)
      if (tree.changed) holding.push(commit.commitId)
      if (!tree.changed && parent === commit.parentCommitId) {
        newIds.set(commit.commitId, commit.commitId)
        return commit.commitId
      }
      const rootHash = rootHashOf(tree.tables)
      const id = rewrittenId(commit.commitId, rootHash, parent)
      yield* run(
        `INSERT INTO repo_commits (commit_id, repo_id, parent_commit_id, branch_name, message, actor, root_hash, tables,
           row_counts, bytes_added, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11)`,
        [
          id,
          repoId,
          parent,
          commit.branchName,
          commit.message,
          commit.actor,
          rootHash,
          JSON.stringify(tree.tables),
          JSON.stringify(tree.rows),
          Number(commit.bytesAdded),
          commit.createdAt
        ]
      )
      newIds.set(commit.commitId, id)
      return id
    })
  for (const commit of commits) yield* visit(commit)
  const rewrites = commits.flatMap((c) => {
    const to = newIds.get(c.commitId)!
    return to === c.commitId ? [] : [{ old_commit_id: c.commitId, new_commit_id: to }]
  })

  // Branch heads, stashes; read copies that held the content are dropped (the next read copies the new tree).
  let readCopiesDropped = 0
  const dropReadCopy = (copy: string) =>
    Effect.andThen(Effect.sync(() => readCopiesDropped++), dropHiddenBank(sql, copy))
  for (const { target_bank_id: copy } of copying) yield* dropReadCopy(copy)
  for (const branch of branches) {
    const head = branch.headCommitId === null ? null : newIds.get(branch.headCommitId) ?? branch.headCommitId
    const state = branch.stateTables === null ? null : rewriteTree(branch.stateTables, branch.stateRows)
    const replica = branch.replicaTables === null ? null : rewriteTree(branch.replicaTables, null)
    const dropCopy = replica !== null && replica.changed
    if (head === branch.headCommitId && (state === null || !state.changed) && !dropCopy) continue
    yield* run(
      `UPDATE repo_branches SET head_commit_id = $3, state_tables = $4::jsonb, state_rows = $5::jsonb,
         replica_tables = $6::jsonb, updated_at = now() WHERE repo_id = $1 AND branch_name = $2`,
      [
        repoId,
        branch.branchName,
        head,
        state === null ? null : JSON.stringify(state.tables),
        state === null ? null : JSON.stringify(state.rows),
        dropCopy ? null : branch.replicaTables === null ? null : JSON.stringify(branch.replicaTables)
      ]
    )
    const copy = branch.workspaceBankId
    if (dropCopy && copy !== bankId && copy.startsWith(workspacePrefix)) yield* dropReadCopy(copy)
  }
  const oldIds = rewrites.map((r) => r.old_commit_id)
  if (oldIds.length > 0) {
    yield* run(`DELETE FROM repo_commits WHERE commit_id IN (SELECT jsonb_array_elements_text($1::jsonb))`, [
      JSON.stringify(oldIds)
    ])
  }

  // The replaced objects go, unless another repo's trees (a fork with its own repo), a fork under way (it copies the
  // state it was asked for, this repo's old trees included: a bank forked before the forget is another bank) or an
  // enable in progress name them.
  const fresh = new Set(plan.newObjects.map((o) => o.hash))
  const candidates = plan.replacedObjects.filter((o) => !fresh.has(o.hash))
  const kept = yield* namedElsewhere(repoId, candidates)
  const doomed = [...new Set(candidates.map((o) => o.hash))].filter((hash) => !kept.has(hash))
  const deleted = doomed.length === 0 ? [] : yield* run(
    `DELETE FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb)) RETURNING hash`,
    [JSON.stringify(doomed)]
  )
  return {
    holding,
    rewrites,
    objectsDeleted: deleted.length,
    readCopiesDropped,
    plannedAhead: holds
  } satisfies PurgeOutcome
})

/** The objects a plan replaces are all still stored (a collection takes them only once no tree names them). */
const stillStored = Effect.fn("Forgetting.stillStored")(function*(plan: PurgePlan) {
  const sql = yield* SqlClient.SqlClient
  const hashes = [...plan.replaced.keys()]
  if (hashes.length === 0) return true
  const rows = yield* sql.unsafe<{ n: number }>(
    `SELECT count(*)::int AS n FROM repo_objects WHERE hash IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify(hashes)]
  )
  return rows[0]?.n === new Set(hashes).size
})

/**
 * Rows of the repo bookkeeping tables (repos, branches, commits) and their mapping to views. No versioning
 * logic here: `MemoryRepos` decides what to write.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import type { CommitView } from "../domain/Repo.ts"
import { objectsLockShared } from "./ObjectsLock.ts"
import type { EnableProgress } from "./SlicedEnable.ts"

export interface RepoRow {
  readonly repoId: string
  readonly rootBankId: string
  readonly name: string
  readonly activeBranch: string
  /** The dirty log is complete since HEAD (false for repos made before it existed, until their next commit). */
  readonly dirtyTracked: boolean
  /** How far a first enable in slices got; null once the initial commit exists. */
  readonly enableProgress: EnableProgress | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface BranchRow {
  readonly repoId: string
  readonly branchName: string
  readonly headCommitId: string | null
  /** For a parked branch, the bank its read copy lives in (materialised on the first `branch_name` read). */
  readonly workspaceBankId: string
  /** A parked branch's working tree (HEAD plus uncommitted work) as table manifests; null when active. */
  readonly stateTables: Readonly<Record<string, string>> | null
  readonly stateRows: Readonly<Record<string, number>> | null
  /** The state the read copy in `workspaceBankId` holds; null when there is no read copy. */
  readonly replicaTables: Readonly<Record<string, string>> | null
}

/** What a branch row says beyond its head: see `BranchRow`. An active branch has none of it. */
export interface BranchState {
  readonly stateTables: Readonly<Record<string, string>> | null
  readonly stateRows: Readonly<Record<string, number>> | null
  readonly replicaTables: Readonly<Record<string, string>> | null
}

export const activeState: BranchState = { stateTables: null, stateRows: null, replicaTables: null }

export interface CommitRow {
  readonly commitId: string
  readonly repoId: string
  readonly parentCommitId: string | null
  readonly branchName: string
  readonly message: string
  readonly actor: string
  readonly rootHash: string
  readonly tables: Readonly<Record<string, string>>
  readonly rowCounts: Readonly<Record<string, number>>
  readonly bytesAdded: string | number | bigint
  readonly createdAt: Date
}

/** Hidden workspace banks: the bank id rules forbid a leading `_`, so clients can neither create nor name them. */
export const workspacePrefix = "__repo__"

/**
 * Removes a hidden bank (a parked branch's read copy) with what names it outside its own tables: a copy still being
 * made (its `repo_forks` job, first: a slice holding the job finishes before the bank goes), its change log and its id
 * renaming. In the caller's transaction.
 */
export const dropHiddenBank = (sql: SqlClient.SqlClient, bankId: string) =>
  Effect.orDie(Effect.gen(function*() {
    yield* sql`DELETE FROM repo_forks WHERE target_bank_id = ${bankId}`
    yield* sql`DELETE FROM banks WHERE bank_id = ${bankId}`
    yield* sql`DELETE FROM memory_unit_changes WHERE bank_id = ${bankId}`
    yield* sql`DELETE FROM repo_id_maps WHERE workspace_bank_id = ${bankId}`
  }))

export const workspaceBankId = (repoId: string, branch: string) =>
  `${workspacePrefix}${repoId.replaceAll("-", "").slice(0, 8)}__${
    createHash("sha1").update(branch).digest("hex").slice(0, 12)
  }`

const iso = (value: Date | string | null | undefined) =>
  value === null || value === undefined ? null : new Date(value).toISOString()

export const commitView = (row: CommitRow): CommitView => ({
  commit_id: row.commitId,
  repo_id: row.repoId,
  parent_commit_id: row.parentCommitId,
  branch_name: row.branchName,
  message: row.message,
  actor: row.actor,
  root_manifest_hash: row.rootHash,
  stats: { rows: row.rowCounts, bytes_added: Number(row.bytesAdded) },
  created_at: iso(row.createdAt)
})

export const isoOf = iso

export const makeRepoStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const die = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.orDie(effect)

  const repoById = (repoId: string) =>
    Effect.map(die(sql<RepoRow>`SELECT * FROM memory_repos WHERE repo_id = ${repoId}`), (rows) => rows[0])
  const repoByBank = (bankId: string) =>
    Effect.map(die(sql<RepoRow>`SELECT * FROM memory_repos WHERE root_bank_id = ${bankId}`), (rows) => rows[0])
  /**
   * Takes the repo's row lock for the rest of the transaction: repo operations on one repo run one at a time. Also
   * holds the object store's lock shared, so a garbage-collection slice never deletes objects an operation reads
   * or is about to reference (`GarbageCollection.ts`).
   */
  const lockRepo = (repoId: string) =>
    Effect.andThen(
      die(sql.unsafe(objectsLockShared)),
      die(sql`SELECT repo_id FROM memory_repos WHERE repo_id = ${repoId} FOR UPDATE`)
    )
  const listRepos = die(sql<RepoRow>`SELECT * FROM memory_repos ORDER BY created_at, repo_id`)
  const branches = (repoId: string) =>
    die(sql<BranchRow>`SELECT * FROM repo_branches WHERE repo_id = ${repoId} ORDER BY branch_name`)
  const branch = (repoId: string, name: string) =>
    Effect.map(
      die(sql<BranchRow>`SELECT * FROM repo_branches WHERE repo_id = ${repoId} AND branch_name = ${name}`),
      (rows) => rows[0]
    )
  const commit = (commitId: string) =>
    Effect.map(die(sql<CommitRow>`SELECT * FROM repo_commits WHERE commit_id = ${commitId}`), (rows) => rows[0])
  const commits = (ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed([])
      : die(sql<CommitRow>`SELECT * FROM repo_commits WHERE commit_id IN ${sql.in(ids)}`)

  const insertRepo = (repoId: string, bankId: string, name: string, branchName: string) =>
    die(
      sql`INSERT INTO memory_repos (repo_id, root_bank_id, name, active_branch) VALUES (${repoId}, ${bankId}, ${name}, ${branchName})`
    )
  const setActive = (repoId: string, branchName: string) =>
    die(sql`UPDATE memory_repos SET active_branch = ${branchName}, updated_at = now() WHERE repo_id = ${repoId}`)
  const touch = (repoId: string) => die(sql`UPDATE memory_repos SET updated_at = now() WHERE repo_id = ${repoId}`)
  const json = (value: object | null) => value === null ? null : JSON.stringify(value)
  const upsertBranch = (
    repoId: string,
    name: string,
    head: string | null,
    workspace: string,
    state: BranchState = activeState
  ) =>
    die(sql`
      INSERT INTO repo_branches (repo_id, branch_name, head_commit_id, workspace_bank_id, state_tables, state_rows, replica_tables)
      VALUES (${repoId}, ${name}, ${head}, ${workspace}, ${json(state.stateTables)}::jsonb, ${
      json(state.stateRows)
    }::jsonb,
        ${json(state.replicaTables)}::jsonb)
      ON CONFLICT (repo_id, branch_name) DO UPDATE
        SET head_commit_id = EXCLUDED.head_commit_id, workspace_bank_id = EXCLUDED.workspace_bank_id,
          state_tables = EXCLUDED.state_tables, state_rows = EXCLUDED.state_rows, replica_tables = EXCLUDED.replica_tables,
          updated_at = now()`)
  /** Records that a parked branch's read copy now holds `tables`. */
  const setReplica = (repoId: string, name: string, tables: Readonly<Record<string, string>>) =>
    die(sql`UPDATE repo_branches SET replica_tables = ${JSON.stringify(tables)}::jsonb
      WHERE repo_id = ${repoId} AND branch_name = ${name}`)
  /** Records that the read copy in hidden bank `bankId` now holds `tables`, for whichever branch owns that bank. */
  const setReplicaOfBank = (repoId: string, bankId: string, tables: Readonly<Record<string, string>>) =>
    die(sql`UPDATE repo_branches SET replica_tables = ${JSON.stringify(tables)}::jsonb
      WHERE repo_id = ${repoId} AND workspace_bank_id = ${bankId}`)
  const setProgress = (repoId: string, progress: EnableProgress | null) =>
    die(sql`UPDATE memory_repos SET enable_progress = ${progress === null ? null : JSON.stringify(progress)}::jsonb,
      dirty_tracked = true, updated_at = now() WHERE repo_id = ${repoId}`)
  const setTracked = (repoId: string) =>
    die(sql`UPDATE memory_repos SET dirty_tracked = true WHERE repo_id = ${repoId} AND NOT dirty_tracked`)
  const insertCommit = (row: Omit<CommitRow, "createdAt">) =>
    Effect.map(
      die(sql<CommitRow>`
        INSERT INTO repo_commits (commit_id, repo_id, parent_commit_id, branch_name, message, actor, root_hash, tables,
          row_counts, bytes_added)
        VALUES (${row.commitId}, ${row.repoId}, ${row.parentCommitId}, ${row.branchName}, ${row.message}, ${row.actor},
          ${row.rootHash}, ${JSON.stringify(row.tables)}::jsonb, ${JSON.stringify(row.rowCounts)}::jsonb,
          ${Number(row.bytesAdded)})
        RETURNING *`),
      (rows) => rows[0]!
    )
  /** The chain of commits from a head back through parents, newest first. */
  const history = (head: string, limit: number, offset: number) =>
    die(sql<CommitRow>`
      WITH RECURSIVE chain AS (
        SELECT c.*, 0 AS depth FROM repo_commits c WHERE c.commit_id = ${head}
        UNION ALL
        SELECT p.*, chain.depth + 1 FROM repo_commits p JOIN chain ON p.commit_id = chain.parent_commit_id
        WHERE chain.depth < ${offset + limit}
      )
      SELECT * FROM chain ORDER BY depth LIMIT ${limit} OFFSET ${offset}`)

  /** How many commits the chain from a head holds. */
  const historyLength = (head: string) =>
    Effect.map(
      die(sql<{ n: number }>`
        WITH RECURSIVE chain AS (
          SELECT c.commit_id, c.parent_commit_id FROM repo_commits c WHERE c.commit_id = ${head}
          UNION ALL
          SELECT p.commit_id, p.parent_commit_id FROM repo_commits p JOIN chain ON p.commit_id = chain.parent_commit_id
        )
        SELECT count(*)::int AS n FROM chain`),
      (rows) => rows[0]?.n ?? 0
    )
  /**
   * The bytes a repo's commits added to the shared object store (each commit's `bytes_added`, summed over the
   * repo's commit rows through their index): what keeping its history costs, without marking the whole store.
   */
  const storedBytes = (repoId: string) =>
    Effect.map(
      die(
        sql<
          { n: string | number }
        >`SELECT coalesce(sum(bytes_added), 0)::bigint AS n FROM repo_commits WHERE repo_id = ${repoId}`
      ),
      (rows) => Number(rows[0]?.n ?? 0)
    )
  const deleteBranch = (repoId: string, name: string) =>
    die(sql`DELETE FROM repo_branches WHERE repo_id = ${repoId} AND branch_name = ${name}`)

  return {
    historyLength,
    storedBytes,
    deleteBranch,
    repoById,
    repoByBank,
    lockRepo,
    listRepos,
    branches,
    branch,
    commit,
    commits,
    insertRepo,
    setActive,
    touch,
    upsertBranch,
    setReplica,
    setReplicaOfBank,
    setTracked,
    setProgress,
    insertCommit,
    history
  }
})

export type RepoStore = Effect.Success<typeof makeRepoStore>

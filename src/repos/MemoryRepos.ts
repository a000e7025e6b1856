/**
 * Memory repos: git-like versioning of a whole bank. The root bank is the working tree of the active branch;
 * other branches' working trees are hidden banks. Every operation that moves state runs in one transaction
 * under the repo's row lock, so a crash mid-checkout or mid-reset leaves the old state or the new one.
 */
import { Config, Context, Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Foreground } from "../bank/Foreground.ts"
import { BankBrains } from "../brain/BankBrains.ts"
import { Conflict, NotFound, ValidationError } from "../domain/Errors.ts"
import type { BranchView, DiffResponse, RepoSummary, StatusResponse } from "../domain/Repo.ts"
import { commitView, dropHiddenBank, isoOf, makeRepoStore, workspaceBankId, workspacePrefix } from "./RepoStore.ts"
import { GarbageCollection } from "./GarbageCollection.ts"
import { rootHashOf } from "./Snapshots.ts"
import { enableSlice, startProgress, storeManifests } from "./SlicedEnable.ts"
import { finishFork, forkSlice, forkTuning, readCopyMark, startForkProgress } from "./SlicedFork.ts"
import type { ForkJob } from "./SlicedFork.ts"
import { makeWorkspaceTree } from "./WorkspaceTree.ts"
import type { TreeState } from "./WorkspaceTree.ts"
import type { BranchRow, CommitRow, RepoRow } from "./RepoStore.ts"
import { diffSides } from "./RepoDiff.ts"
import type { Side } from "./RepoDiff.ts"
import { forward, rowDelta } from "./RowDelta.ts"
import { Snapshots } from "./Snapshots.ts"
import type { Source } from "./Snapshots.ts"

export interface DiffQuery {
  readonly from_commit_id?: string | undefined
  readonly to_commit_id?: string | undefined
  readonly from_branch?: string | undefined
  readonly to_branch?: string | undefined
  readonly include_workspace?: boolean | undefined
  readonly rows?: boolean | undefined
  readonly table?: string | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

export interface ForkInput {
  readonly target_bank_id: string
  readonly target_bank_name?: string | null | undefined
  readonly source_branch?: string | null | undefined
  readonly source_commit_id?: string | null | undefined
  readonly include_workspace?: boolean | undefined
  readonly enable_repo?: boolean | undefined
  readonly repo_name?: string | null | undefined
}

/**
 * Runs after each committed slice of an enable or a fork, before the next. Only tests set it, to hold a job part-way
 * (a client that leaves, a branch deleted mid-copy) rather than race its slices with polls: on a loaded machine a
 * job finished between two polls and the test waited for a state that had come and gone.
 */
export const sliceHook: { afterSlice: Effect.Effect<void> } = { afterSlice: Effect.void }

const makeMemoryRepos = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const snapshots = yield* Snapshots
  const brains = yield* BankBrains
  const store = yield* makeRepoStore
  const trees = yield* makeWorkspaceTree(snapshots)
  const garbage = yield* GarbageCollection
  forkTuning.sliceRows = yield* Config.Int("SERVICE_API_REPO_FORK_SLICE_ROWS").pipe(
    Config.withDefault(forkTuning.sliceRows)
  )
  const scope = yield* Effect.scope
  const foreground = yield* Foreground

  /** Between two slices of a job a request waits for: other requests get the session for a while (`Foreground`). */
  const betweenSlices = (sliceStarted: number) =>
    foreground.shareAfterSlice(Duration.millis(performance.now() - sliceStarted)).pipe(
      Effect.andThen(Effect.suspend(() => sliceHook.afterSlice))
    )

  /**
   * A sliced enable or fork outlives the request that drives it. A client that gives up (a timeout, a closed
   * connection) interrupts the request's fiber; the job, run there, stopped part-way and stayed so until the next
   * call or the next start. It now runs in the service's scope: the caller waits for it, and interrupting the wait
   * leaves it running. Two drivers of one job are safe (each slice locks and reads the progress afresh).
   */
  const outlivingCaller = <A, E>(job: Effect.Effect<A, E>) => Effect.flatMap(Effect.forkIn(job, scope), Fiber.join)

  /**
   * After a restore committed: this node's brain of the bank goes, and `changed` reaches the bank's owner on a
   * cluster, whose brain then finds the horizon the restore moved and rebuilds (`Snapshots.invalidateBrains`).
   */
  const restored = (bankId: string) => Effect.andThen(brains.drop(bankId), brains.changed(bankId))

  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (error) => Effect.die(error)))

  const bankExists = (bankId: string) =>
    Effect.map(Effect.orDie(sql`SELECT 1 FROM banks WHERE bank_id = ${bankId}`), (rows) => rows.length > 0)

  const repo = (repoId: string) =>
    Effect.flatMap(
      store.repoById(repoId),
      (row) => row === undefined ? NotFound.of("repo", repoId) : Effect.succeed(row)
    )

  const commitOf = (repoRow: RepoRow, commitId: string) =>
    Effect.flatMap(
      store.commit(commitId),
      (row) =>
        row === undefined || row.repoId !== repoRow.repoId ? NotFound.of("commit", commitId) : Effect.succeed(row)
    )

  const branchOf = (repoRow: RepoRow, name: string) =>
    Effect.flatMap(
      store.branch(repoRow.repoId, name),
      (row) => row === undefined ? NotFound.of("branch", name) : Effect.succeed(row)
    )

  const headOf = (branch: BranchRow) =>
    branch.headCommitId === null ? Effect.succeed(undefined) : store.commit(branch.headCommitId)

  const headTables = (head: CommitRow | undefined) => head?.tables ?? {}
  const headState = (head: CommitRow | undefined): TreeState => ({
    tables: head?.tables ?? {},
    rows: head?.rowCounts ?? {}
  })

  const stored = (commit: CommitRow): Side => ({ _tag: "Stored", tables: commit.tables, rows: commit.rowCounts })
  const storedState = (state: TreeState): Side => ({ _tag: "Stored", tables: state.tables, rows: state.rows })
  const rootSource = (repoRow: RepoRow): Source => ({ bankId: repoRow.rootBankId, workspace: false })

  const emptySide: Side = { _tag: "Stored", tables: {}, rows: {} }

  const hashes = (tables: Readonly<Record<string, { readonly hash: string }>>) =>
    Object.fromEntries(Object.entries(tables).map(([name, state]) => [name, state.hash]))
  const counts = (tables: Readonly<Record<string, { readonly rows: number }>>) =>
    Object.fromEntries(Object.entries(tables).map(([name, state]) => [name, state.rows]))

  /**
   * The active working tree as a stored state, at the cost of what changed (the dirty log), or by hashing the
   * bank when the log is not complete (a repo made before it existed) or HEAD uses the early one-level layout.
   * `consume` takes the logged keys out of the log as it reads them (a commit: a write after this read logs its
   * key again). Must run inside a transaction.
   */
  const activeTree = (repoRow: RepoRow, head: CommitRow | undefined, consume: boolean) =>
    Effect.gen(function*() {
      if (repoRow.dirtyTracked) {
        const tree = yield* trees.build(repoRow.rootBankId, headState(head), { store: true, consume })
        if (tree !== undefined) {
          return { state: tree as TreeState, rootHash: tree.rootHash, bytesAdded: tree.bytesAdded }
        }
      }
      const capture = yield* snapshots.capture(rootSource(repoRow), headTables(head))
      return {
        state: { tables: hashes(capture.tables), rows: counts(capture.tables) },
        rootHash: capture.rootHash,
        bytesAdded: capture.bytesAdded
      }
    })

  /**
   * A parked branch's working tree. Branches parked before branches were pointers have only their hidden bank:
   * it is hashed once and recorded as both the branch's state and its read copy's.
   */
  const parkedState = (repoRow: RepoRow, branch: BranchRow) =>
    Effect.gen(function*() {
      if (branch.stateTables !== null) {
        return { tables: branch.stateTables, rows: branch.stateRows ?? {} } satisfies TreeState
      }
      const head = yield* headOf(branch)
      const capture = yield* snapshots.capture({ bankId: branch.workspaceBankId, workspace: true }, headTables(head))
      const state: TreeState = { tables: hashes(capture.tables), rows: counts(capture.tables) }
      yield* store.upsertBranch(repoRow.repoId, branch.branchName, branch.headCommitId, branch.workspaceBankId, {
        stateTables: state.tables,
        stateRows: state.rows,
        replicaTables: state.tables
      })
      return state
    })

  /** The keys where a parked state differs from its HEAD: the dirty log its working tree starts with when checked out. */
  const keysBetween = (head: CommitRow | undefined, state: TreeState) =>
    Effect.gen(function*() {
      if (rootHashOf(headTables(head)) === rootHashOf(state.tables)) return {}
      const changes = yield* rowDelta(snapshots, head === undefined ? emptySide : stored(head), storedState(state))
      return Object.fromEntries(changes.map((c) => [
        c.table,
        [...c.removed.map(([key]) => key), ...c.changed.map(([key]) => key), ...c.added.map(([key]) => key)]
      ]))
    })

  /** A branch's working tree as a stored state: the active one stashed from the dirty log, a parked one's own. */
  const workingState = (repoRow: RepoRow, branch: BranchRow) =>
    branch.branchName === repoRow.activeBranch
      ? Effect.flatMap(headOf(branch), (head) => Effect.map(activeTree(repoRow, head, false), (tree) => tree.state))
      : parkedState(repoRow, branch)

  const statusOf = (repoRow: RepoRow, branch: BranchRow) =>
    Effect.gen(function*() {
      const head = yield* headOf(branch)
      const active = branch.branchName === repoRow.activeBranch
      const storedBytes = yield* store.storedBytes(repoRow.repoId)
      const answer = (changedComponents: ReadonlyArray<string>, tableDeltas: StatusResponse["table_deltas"]) => ({
        repo_id: repoRow.repoId,
        branch_name: branch.branchName,
        workspace_bank_id: active ? repoRow.rootBankId : branch.workspaceBankId,
        head_commit_id: branch.headCommitId,
        dirty: changedComponents.length > 0,
        changed_components: changedComponents,
        table_deltas: tableDeltas,
        stored_bytes: storedBytes
      } satisfies StatusResponse)
      const progress = repoRow.enableProgress
      if (progress !== null) {
        const tables = (yield* snapshots.plans).length
        return {
          ...answer([], {}),
          enabling: {
            phase: progress.phase,
            rows_done: progress.rowsDone,
            tables_done: progress.phase === "rows" ? progress.table : tables + progress.table,
            tables_total: 2 * tables
          }
        }
      }
      const before = head === undefined ? emptySide : stored(head)
      if (!active) {
        const state = yield* parkedState(repoRow, branch)
        if (rootHashOf(state.tables) === rootHashOf(headTables(head))) return answer([], {})
        const difference = yield* diffSides(snapshots, before, storedState(state), { listRows: false })
        return answer(difference.changedComponents, difference.tableDeltas)
      }
      const tree = repoRow.dirtyTracked
        ? yield* trees.build(repoRow.rootBankId, headState(head), { store: false, consume: false })
        : undefined
      if (tree === undefined) {
        const capture = yield* snapshots.capture(rootSource(repoRow), false)
        const difference = yield* diffSides(snapshots, before, { _tag: "Live", capture, source: rootSource(repoRow) }, {
          listRows: false
        })
        return answer(difference.changedComponents, difference.tableDeltas)
      }
      const changed = Object.keys(tree.changes).sort()
      const deltas: Record<string, StatusResponse["table_deltas"][string]> = {}
      for (const table of changed) {
        const [b, a] = [head?.rowCounts[table] ?? 0, tree.rows[table] ?? 0]
        deltas[table] = { before: b, after: a, delta: a - b, ...tree.changes[table]! }
      }
      return answer(changed, deltas)
    })

  /** Views of the repo's branches (of `only` when given: a status is a tree build for a dirty active branch). */
  const branchViews = (repoRow: RepoRow, only?: string) =>
    Effect.gen(function*() {
      const rows = (yield* store.branches(repoRow.repoId)).filter((row) =>
        only === undefined || row.branchName === only
      )
      const heads = yield* store.commits(rows.flatMap((row) => row.headCommitId === null ? [] : [row.headCommitId]))
      const byId = new Map(heads.map((head) => [head.commitId, head]))
      return yield* Effect.forEach(rows, (row) =>
        Effect.map(statusOf(repoRow, row), (status): BranchView => {
          const head = row.headCommitId === null ? undefined : byId.get(row.headCommitId)
          return {
            branch_name: row.branchName,
            workspace_bank_id: status.workspace_bank_id,
            is_active: row.branchName === repoRow.activeBranch,
            head_commit_id: row.headCommitId,
            head_message: head?.message ?? null,
            head_created_at: isoOf(head?.createdAt),
            dirty: status.dirty
          }
        }))
    })

  const summary = (repoRow: RepoRow) =>
    Effect.gen(function*() {
      const branches = yield* branchViews(repoRow)
      const active = branches.find((branch) => branch.is_active)
      return {
        repo_id: repoRow.repoId,
        root_bank_id: repoRow.rootBankId,
        name: repoRow.name,
        active_branch: repoRow.activeBranch,
        head_commit_id: active?.head_commit_id ?? null,
        head_message: active?.head_message ?? null,
        head_created_at: active?.head_created_at ?? null,
        created_at: isoOf(repoRow.createdAt),
        updated_at: isoOf(repoRow.updatedAt),
        branches
      } satisfies RepoSummary
    })

  /**
   * Commits the active workspace; answers HEAD unchanged when nothing changed (no empty commits). Reads and
   * hashes only the logged keys, and stores only the rows, leaves, nodes and manifests on their paths.
   */
  const commitActive = (repoRow: RepoRow, message: string, actor: string) =>
    Effect.gen(function*() {
      const branch = yield* branchOf(repoRow, repoRow.activeBranch)
      const head = yield* headOf(branch)
      const tree = yield* activeTree(repoRow, head, true)
      if (!repoRow.dirtyTracked) {
        // The tree was hashed from the bank: from now on the log is complete since this state.
        yield* trees.resetLog(repoRow.rootBankId)
        yield* store.setTracked(repoRow.repoId)
      }
      if (head !== undefined && head.rootHash === tree.rootHash) return { commit: head, created: false }
      const row = yield* store.insertCommit({
        commitId: crypto.randomUUID(),
        repoId: repoRow.repoId,
        parentCommitId: head?.commitId ?? null,
        branchName: branch.branchName,
        message,
        actor,
        rootHash: tree.rootHash,
        tables: tree.state.tables,
        rowCounts: tree.state.rows,
        bytesAdded: tree.bytesAdded
      })
      yield* store.upsertBranch(repoRow.repoId, branch.branchName, row.commitId, repoRow.rootBankId)
      yield* store.touch(repoRow.repoId)
      return { commit: row, created: true }
    })

  const enableIn = (bankId: string, name: string | null | undefined) =>
    Effect.gen(function*() {
      const existing = yield* store.repoByBank(bankId)
      if (existing !== undefined) return existing
      const repoId = crypto.randomUUID()
      yield* store.insertRepo(repoId, bankId, name ?? bankId, "main")
      yield* store.upsertBranch(repoId, "main", null, bankId)
      const repoRow = (yield* store.repoById(repoId))!
      yield* commitActive(repoRow, "Initial commit", "system")
      return (yield* store.repoById(repoId))!
    })

  /**
   * Turns repo mode on for a bank. The initial commit is built in bounded slices, each its own transaction, with
   * the fiber yielding between them (`SlicedEnable`); an enable interrupted by a crash resumes on the next call.
   */
  const enable = Effect.fn("MemoryRepos.enable")(function*(bankId: string, name: string | null | undefined) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    const started = yield* inTransaction(startEnable(bankId, name))
    return yield* outlivingCaller(driveEnable(started, bankId))
  })

  /**
   * Makes the repo row of a sliced enable (or finds the bank's repo): its `enable_progress` makes the enable
   * durable, driven by `driveEnable` (by the call, and at start-up after a crash). Must run inside a transaction.
   */
  const startEnable = (bankId: string, name: string | null | undefined) =>
    Effect.gen(function*() {
      const existing = yield* store.repoByBank(bankId)
      if (existing !== undefined) return existing
      const repoId = crypto.randomUUID()
      yield* store.insertRepo(repoId, bankId, name ?? bankId, "main")
      yield* store.upsertBranch(repoId, "main", null, bankId)
      // From here on every write to the bank is logged: the last slice replays those keys over the sliced tree.
      yield* trees.resetLog(bankId)
      yield* store.setProgress(repoId, startProgress)
      return (yield* store.repoById(repoId))!
    })

  /** Runs a sliced enable's remaining slices, each its own transaction under the repo's lock (safe to run twice at once). */
  const driveEnable = (started: RepoRow, bankId: string) =>
    Effect.gen(function*() {
      let finished = started.enableProgress === null
      while (!finished) {
        const sliceStarted = performance.now()
        finished = yield* inTransaction(Effect.gen(function*() {
          yield* store.lockRepo(started.repoId)
          const row = yield* repo(started.repoId)
          if (row.enableProgress === null) return true
          const next = yield* enableSlice(snapshots, row.repoId, bankId, row.enableProgress).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          if (next !== "done") {
            yield* store.setProgress(row.repoId, next)
            return false
          }
          const manifests = yield* storeManifests(row.enableProgress).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          const tree = yield* trees.build(bankId, manifests.state, { store: true, consume: true })
          if (tree === undefined) return yield* Effect.die(new Error("a sliced tree must be two-level"))
          const commit = yield* store.insertCommit({
            commitId: crypto.randomUUID(),
            repoId: row.repoId,
            parentCommitId: null,
            branchName: "main",
            message: "Initial commit",
            actor: "system",
            rootHash: tree.rootHash,
            tables: tree.tables,
            rowCounts: tree.rows,
            bytesAdded: row.enableProgress.bytes + manifests.bytes + tree.bytesAdded
          })
          yield* store.upsertBranch(row.repoId, row.activeBranch, commit.commitId, bankId)
          yield* store.setProgress(row.repoId, null)
          return true
        }))
        yield* betweenSlices(sliceStarted)
      }
      // Tree slices take the staged rows out as they read them; an enable begun by an earlier version left them all
      // until the end. Those go in slices too: one big delete would hold the session again.
      for (let removed = 1; removed > 0;) {
        const rows = yield* Effect.orDie(sql<{ n: number }>`
        WITH gone AS (DELETE FROM repo_enable_rows WHERE ctid IN (
          SELECT ctid FROM repo_enable_rows WHERE repo_id = ${started.repoId} LIMIT 5000) RETURNING 1)
        SELECT count(*)::int AS n FROM gone`)
        removed = rows[0]?.n ?? 0
        if (removed > 0) yield* Effect.sleep("1 millis")
      }
      return yield* summary(yield* repo(started.repoId))
    })

  /** The job row of a fork (or a read copy) of `state` into `targetBankId`, copied from its first slice on. */
  const startForkJob = (
    targetBankId: string,
    sourceRepoId: string,
    state: TreeState,
    request: Readonly<Record<string, unknown>>
  ) =>
    Effect.orDie(
      sql`INSERT INTO repo_forks (target_bank_id, source_repo_id, tables, row_counts, progress, request)
        VALUES (${targetBankId}, ${sourceRepoId}, ${JSON.stringify(state.tables)}::jsonb,
          ${JSON.stringify(state.rows)}::jsonb, ${JSON.stringify(startForkProgress)}::jsonb,
          ${JSON.stringify(request)}::jsonb)`
    )

  /** A fork copied in slices that has not finished (`SlicedFork`); `lock` takes its row lock. */
  const forkJob = (targetBankId: string, lock = false) =>
    Effect.map(
      Effect.orDie(
        sql<ForkJob>`SELECT * FROM repo_forks WHERE target_bank_id = ${targetBankId} ${lock ? sql`FOR UPDATE` : sql``}`
      ),
      (rows) => rows[0]
    )

  /** Operations that need the initial commit wait until a sliced enable made it. */
  const ready = (repoRow: RepoRow) =>
    repoRow.enableProgress === null ? Effect.void : Effect.fail(
      new Conflict({
        detail: `repo_id: repo '${repoRow.repoId}' is still being enabled (${repoRow.enableProgress.rowsDone} rows ` +
          "hashed); its status reports progress"
      })
    )

  const create = Effect.fn("MemoryRepos.create")(function*(input: {
    readonly bank_id: string
    readonly repo_name?: string | null | undefined
    readonly source_bank_id?: string | null | undefined
  }) {
    if ((yield* store.repoByBank(input.bank_id)) !== undefined) {
      return yield* new Conflict({ detail: `bank_id: bank '${input.bank_id}' already has a memory repo` })
    }
    const source = input.source_bank_id
    if (source !== undefined && source !== null && !(yield* bankExists(source))) {
      return yield* NotFound.of("bank", source)
    }
    // Cloning restores the source's tables over the target: into an existing bank it would silently replace what the
    // bank holds. A clone goes into a new bank; an existing bank gets a repo with `enable` (or this call, no source).
    if (source !== undefined && source !== null && source !== input.bank_id && (yield* bankExists(input.bank_id))) {
      return yield* new Conflict({
        detail: `bank_id: bank '${input.bank_id}' already exists and cloning '${source}' into it would replace its ` +
          "memories; clone into a new bank_id"
      })
    }
    if (source !== undefined && source !== null && source !== input.bank_id) {
      // A source with a repo is cloned as a fork of its live workspace: copied in slices (durable, resumed at
      // start-up), then the new repo's initial commit in slices; the answer still comes when the repo is made.
      const sourceRepo = yield* store.repoByBank(source)
      if (sourceRepo !== undefined && sourceRepo.enableProgress === null) {
        const forked = yield* fork(sourceRepo.repoId, {
          target_bank_id: input.bank_id,
          include_workspace: true,
          enable_repo: true,
          repo_name: input.repo_name
        })
        if (forked.repo !== null) return forked.repo
        return yield* summary(yield* repo((yield* store.repoByBank(input.bank_id))!.repoId))
      }
    }
    // Otherwise (no source, or a source without a repo: nothing of it is stored as objects yet) one transaction,
    // which a client that gives up does not roll back.
    const repoRow = yield* outlivingCaller(inTransaction(Effect.gen(function*() {
      yield* Effect.orDie(sql`INSERT INTO banks (bank_id) VALUES (${input.bank_id}) ON CONFLICT (bank_id) DO NOTHING`)
      if (source !== undefined && source !== null && source !== input.bank_id) {
        const captured = yield* snapshots.capture({ bankId: source, workspace: false }, {})
        yield* snapshots.restore(input.bank_id, hashes(captured.tables), { rename: true, keepMap: false })
      }
      return yield* enableIn(input.bank_id, input.repo_name)
    })))
    yield* restored(input.bank_id)
    return yield* summary(repoRow)
  })

  const list = Effect.fn("MemoryRepos.list")(function*() {
    return yield* Effect.forEach(yield* store.listRepos, summary)
  })

  /**
   * The repo's root bank, from its row alone: what a caller needs to check access before an operation. `get` answers
   * the summary, which carries every branch's status (a tree build of each dirty one).
   */
  const rootBankOf = Effect.fn("MemoryRepos.rootBankOf")(function*(repoId: string) {
    return (yield* repo(repoId)).rootBankId
  })

  const get = Effect.fn("MemoryRepos.get")(function*(repoId: string) {
    return yield* summary(yield* repo(repoId))
  })

  const forBank = Effect.fn("MemoryRepos.forBank")(function*(bankId: string) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    const row = yield* store.repoByBank(bankId)
    return row === undefined ? null : yield* summary(row)
  })

  /** The id of the bank's repo (null without one), from its row alone: no summary, so no branch's status. */
  const repoIdOfBank = Effect.fn("MemoryRepos.repoIdOfBank")(function*(bankId: string) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    return (yield* store.repoByBank(bankId))?.repoId ?? null
  })

  const branches = Effect.fn("MemoryRepos.branches")(function*(repoId: string) {
    return yield* branchViews(yield* repo(repoId))
  })

  const branchesOfBank = Effect.fn("MemoryRepos.branchesOfBank")(function*(bankId: string) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    const row = yield* store.repoByBank(bankId)
    if (row === undefined) return yield* NotFound.of("memory repo of bank", bankId)
    return yield* branchViews(row)
  })

  /** A branch is a row naming a commit (and, from the live workspace, its uncommitted work as stored objects). */
  const createBranch = Effect.fn("MemoryRepos.createBranch")(function*(
    repoId: string,
    input: { readonly branch_name: string; readonly from_commit_id?: string | null | undefined }
  ) {
    yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      yield* ready(repoRow)
      if ((yield* store.branch(repoId, input.branch_name)) !== undefined) {
        return yield* new Conflict({ detail: `branch_name: branch '${input.branch_name}' already exists` })
      }
      const active = yield* branchOf(repoRow, repoRow.activeBranch)
      const from = input.from_commit_id
      let state: TreeState
      let head: string | null
      if (from !== undefined && from !== null) {
        const commit = yield* commitOf(repoRow, from)
        state = headState(commit)
        head = commit.commitId
      } else {
        state = (yield* activeTree(repoRow, yield* headOf(active), false)).state
        head = active.headCommitId
      }
      yield* store.upsertBranch(repoId, input.branch_name, head, workspaceBankId(repoId, input.branch_name), {
        stateTables: state.tables,
        stateRows: state.rows,
        replicaTables: null
      })
      yield* store.touch(repoId)
    }))
    const repoRow = yield* repo(repoId)
    const views = yield* branchViews(repoRow, input.branch_name)
    return views.find((view) => view.branch_name === input.branch_name)!
  })

  /**
   * Deletes a parked branch: its row, and its read copy if it has one. Its stashed work and the commits only it
   * reached become garbage for the next collection.
   */
  const deleteBranch = Effect.fn("MemoryRepos.deleteBranch")(function*(repoId: string, branchName: string) {
    yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      yield* ready(repoRow)
      const branch = yield* branchOf(repoRow, branchName)
      if (branchName === repoRow.activeBranch) {
        return yield* ValidationError.single(
          "branch_name",
          `'${branchName}' is the active branch; check out another branch first`
        )
      }
      yield* store.deleteBranch(repoId, branchName)
      const copy = branch.workspaceBankId
      const shared = (yield* store.branches(repoId)).some((other) => other.workspaceBankId === copy)
      if (copy !== repoRow.rootBankId && copy.startsWith(workspacePrefix) && !shared) {
        yield* dropHiddenBank(sql, copy)
      }
      yield* store.touch(repoId)
    }))
    yield* garbage.request
    return yield* branchViews(yield* repo(repoId))
  })

  /**
   * Checkout: the active working tree is stashed as objects (only what the dirty log names is read), the root
   * bank gets only the rows that differ between that tree and the target's, and the dirty log is set to the keys
   * where the target's working tree differs from its HEAD. No other bank is written: the parked branch takes
   * over the target's read copy (if it had one), which its next `branch_name` read brings up to date.
   */
  const checkout = Effect.fn("MemoryRepos.checkout")(function*(repoId: string, branchName: string) {
    const touched = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      yield* ready(repoRow)
      const target = yield* branchOf(repoRow, branchName)
      if (branchName === repoRow.activeBranch) return []
      const current = yield* branchOf(repoRow, repoRow.activeBranch)
      const working = yield* activeTree(repoRow, yield* headOf(current), false)
      const wanted = yield* parkedState(repoRow, target)
      if (working.rootHash !== rootHashOf(wanted.tables)) {
        const changes = yield* rowDelta(snapshots, storedState(working.state), storedState(wanted))
        yield* snapshots.applyDelta(repoRow.rootBankId, forward(changes), { toLocal: false })
      }
      yield* trees.resetLog(repoRow.rootBankId, yield* keysBetween(yield* headOf(target), wanted))
      yield* store.setTracked(repoId)
      const fresh = yield* branchOf(repoRow, branchName) // parkedState may have recorded a legacy read copy
      yield* store.upsertBranch(repoId, current.branchName, current.headCommitId, fresh.workspaceBankId, {
        stateTables: working.state.tables,
        stateRows: working.state.rows,
        replicaTables: fresh.replicaTables
      })
      yield* store.upsertBranch(repoId, target.branchName, target.headCommitId, repoRow.rootBankId)
      yield* store.setActive(repoId, branchName)
      return [repoRow.rootBankId]
    }))
    yield* Effect.forEach(touched, restored, { discard: true })
    if (touched.length > 0) yield* garbage.request // the stash the target branch parked is garbage now
    return yield* summary(yield* repo(repoId))
  })

  const commit = Effect.fn("MemoryRepos.commit")(function*(
    repoId: string,
    input: { readonly message: string; readonly actor?: string | null | undefined }
  ) {
    const { commit, created } = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      yield* ready(repoRow)
      return yield* commitActive(repoRow, input.message, input.actor ?? "anonymous")
    }))
    if (created) yield* garbage.request // coalesced: stashes of workspace diffs and parked work go in the next cycle
    return { ...commitView(commit), created }
  })

  const status = Effect.fn("MemoryRepos.status")(function*(repoId: string, branchName: string | undefined) {
    const repoRow = yield* repo(repoId)
    return yield* statusOf(repoRow, yield* branchOf(repoRow, branchName ?? repoRow.activeBranch))
  })

  const log = Effect.fn("MemoryRepos.log")(function*(
    repoId: string,
    query: {
      readonly branch_name?: string | undefined
      readonly limit?: number | undefined
      readonly offset?: number | undefined
    }
  ) {
    const repoRow = yield* repo(repoId)
    const branch = yield* branchOf(repoRow, query.branch_name ?? repoRow.activeBranch)
    const limit = Math.min(200, Math.max(1, query.limit ?? 50))
    const offset = Math.max(0, query.offset ?? 0)
    const rows = branch.headCommitId === null ? [] : yield* store.history(branch.headCommitId, limit, offset)
    const total = branch.headCommitId === null ? 0 : yield* store.historyLength(branch.headCommitId)
    return { repo_id: repoId, branch_name: branch.branchName, commits: rows.map(commitView), total, limit, offset }
  })

  const diff = Effect.fn("MemoryRepos.diff")(function*(repoId: string, query: DiffQuery) {
    const repoRow = yield* repo(repoId)
    if (query.from_commit_id !== undefined && query.from_branch !== undefined) {
      return yield* ValidationError.single("from_branch", "give from_commit_id or from_branch, not both", "query")
    }
    if (query.to_commit_id !== undefined && query.to_branch !== undefined) {
      return yield* ValidationError.single("to_branch", "give to_commit_id or to_branch, not both", "query")
    }
    const headSide = (branch: BranchRow) =>
      branch.headCommitId === null
        ? Effect.succeed(emptySide)
        : Effect.map(commitOf(repoRow, branch.headCommitId), stored)
    const left = query.from_commit_id !== undefined
      ? { side: stored(yield* commitOf(repoRow, query.from_commit_id)), label: `commit:${query.from_commit_id}` }
      : yield* Effect.gen(function*() {
        const branch = yield* branchOf(repoRow, query.from_branch ?? repoRow.activeBranch)
        return { side: yield* headSide(branch), label: `branch:${branch.branchName}` }
      })
    const right = query.to_commit_id !== undefined
      ? { side: stored(yield* commitOf(repoRow, query.to_commit_id)), label: `commit:${query.to_commit_id}` }
      : yield* Effect.gen(function*() {
        const branch = yield* branchOf(repoRow, query.to_branch ?? repoRow.activeBranch)
        return query.include_workspace === true
          ? {
            side: storedState(yield* inTransaction(workingState(repoRow, branch))),
            label: `workspace:${branch.branchName}`
          }
          : { side: yield* headSide(branch), label: `branch:${branch.branchName}` }
      })
    const difference = yield* diffSides(snapshots, left.side, right.side, {
      listRows: query.rows === true,
      table: query.table
    })
    const limit = Math.min(1000, Math.max(1, query.limit ?? 100))
    const offset = Math.max(0, query.offset ?? 0)
    return {
      repo_id: repoId,
      from_ref: left.label,
      to_ref: right.label,
      dirty: difference.changedComponents.length > 0,
      changed_components: difference.changedComponents,
      table_deltas: difference.tableDeltas,
      rows: query.rows === true
        ? { items: difference.rows.slice(offset, offset + limit), total: difference.rows.length, limit, offset }
        : null
    } satisfies DiffResponse
  })

  const resetHard = Effect.fn("MemoryRepos.resetHard")(function*(repoId: string, input: {
    readonly commit_id: string
    readonly force?: boolean | undefined
  }) {
    const root = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      yield* ready(repoRow)
      const target = yield* commitOf(repoRow, input.commit_id)
      const active = yield* branchOf(repoRow, repoRow.activeBranch)
      const head = yield* headOf(active)
      const working = yield* activeTree(repoRow, head, false)
      if (input.force !== true && working.rootHash !== rootHashOf(headTables(head))) {
        return yield* ValidationError.single("force", "Workspace is dirty. Commit changes first or pass force=true.")
      }
      // Only the rows that differ between the working tree and the commit are written.
      if (working.rootHash !== target.rootHash) {
        const changes = yield* rowDelta(snapshots, storedState(working.state), stored(target))
        yield* snapshots.applyDelta(repoRow.rootBankId, forward(changes), { toLocal: false })
      }
      yield* trees.resetLog(repoRow.rootBankId)
      yield* store.setTracked(repoId)
      yield* store.upsertBranch(repoId, active.branchName, target.commitId, repoRow.rootBankId)
      yield* store.touch(repoId)
      return repoRow.rootBankId
    }))
    yield* restored(root)
    yield* garbage.request // the commits after the target are orphaned
    return yield* status(repoId, undefined)
  })

  const fork = Effect.fn("MemoryRepos.fork")(function*(repoId: string, input: ForkInput) {
    const hasCommit = input.source_commit_id !== undefined && input.source_commit_id !== null
    const hasBranch = input.source_branch !== undefined && input.source_branch !== null
    if (hasCommit && hasBranch) {
      return yield* ValidationError.single("source_commit_id", "give source_commit_id or source_branch, not both")
    }
    if (hasCommit && input.include_workspace === true) {
      return yield* ValidationError.single("include_workspace", "a commit has no workspace; use source_branch")
    }
    // The same fork asked again after a crash resumes the copy; any other existing bank is a conflict.
    const pending = yield* forkJob(input.target_bank_id).pipe(
      Effect.map((job) => job?.request[readCopyMark] === true ? undefined : job) // a read copy's hidden bank exists
    )
    if (pending === undefined ? yield* bankExists(input.target_bank_id) : pending.sourceRepoId !== repoId) {
      return yield* new Conflict({ detail: `target_bank_id: bank '${input.target_bank_id}' already exists` })
    }
    if (pending === undefined) {
      yield* inTransaction(Effect.gen(function*() {
        yield* store.lockRepo(repoId)
        const repoRow = yield* repo(repoId)
        yield* ready(repoRow)
        let state: TreeState
        let ref: string
        let branchName: string | null = null
        let commitId: string | null = null
        if (hasCommit) {
          const commit = yield* commitOf(repoRow, input.source_commit_id!)
          state = headState(commit)
          commitId = commit.commitId
          ref = `commit:${commit.commitId}`
        } else {
          const branch = yield* branchOf(repoRow, input.source_branch ?? repoRow.activeBranch)
          branchName = branch.branchName
          commitId = branch.headCommitId
          if (input.include_workspace === true) {
            state = yield* workingState(repoRow, branch)
            ref = `workspace:${branch.branchName}`
          } else {
            if (branch.headCommitId === null) {
              return yield* ValidationError.single("source_branch", `branch '${branch.branchName}' has no commit`)
            }
            state = headState(yield* commitOf(repoRow, branch.headCommitId))
            ref = `branch:${branch.branchName}`
          }
        }
        const made = yield* Effect.orDie(sql`INSERT INTO banks (bank_id) VALUES (${input.target_bank_id})
          ON CONFLICT (bank_id) DO NOTHING RETURNING 1`)
        if (made.length === 0) {
          return yield* new Conflict({ detail: `target_bank_id: bank '${input.target_bank_id}' already exists` })
        }
        yield* startForkJob(input.target_bank_id, repoId, state, { ...input, ref, branchName, commitId })
      }))
    }
    // A pending job another fiber (the start-up resumption) ends meanwhile leaves its request here to answer with.
    const request = yield* outlivingCaller(driveFork(input.target_bank_id, pending?.request))
    const name = yield* Effect.orDie(
      sql<{ name: string | null }>`SELECT name FROM banks WHERE bank_id = ${input.target_bank_id}`
    )
    const text = (key: string) => typeof request[key] === "string" ? request[key] as string : null
    // The repo a fork with `enable_repo` made, whichever fiber (this call or the start-up resumption) finished it.
    const enabled = request["enable_repo"] === true ? yield* store.repoByBank(input.target_bank_id) : undefined
    return {
      bank_id: input.target_bank_id,
      bank_name: name[0]?.name ?? null,
      source_repo_id: repoId,
      source_ref: text("ref") ?? "",
      source_branch: text("branchName"),
      source_commit_id: text("commitId"),
      include_workspace: request["include_workspace"] === true,
      repo_enabled: enabled !== undefined,
      repo: enabled === undefined ? null : yield* summary(enabled)
    }
  })

  /**
   * Runs fork `targetBankId`'s remaining slices, each its own transaction under the job row's lock (so the call
   * and the start-up resumption may drive the same fork at once); the last one finishes the bank, ends the job and,
   * with `enable_repo`, starts the new repo's sliced enable, driven here too. Answers the fork's request.
   */
  const driveFork = (targetBankId: string, known?: Readonly<Record<string, unknown>>) =>
    Effect.gen(function*() {
      let job = yield* forkJob(targetBankId)
      let request = job?.request ?? known ?? {}
      let enabling: RepoRow | undefined
      while (job !== undefined) {
        const sliceStarted = performance.now()
        job = yield* inTransaction(Effect.gen(function*() {
          const current = yield* forkJob(targetBankId, true)
          if (current === undefined) return undefined
          request = current.request
          const readCopy = current.request[readCopyMark] === true
          if (readCopy && !(yield* bankExists(targetBankId))) {
            // Its repo's root bank was deleted, and with it the hidden bank the copy was going to.
            yield* Effect.orDie(sql`DELETE FROM repo_forks WHERE target_bank_id = ${targetBankId}`)
            return undefined
          }
          const next = yield* forkSlice(snapshots, current).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          if (next !== "done") {
            yield* Effect.orDie(sql`UPDATE repo_forks SET progress = ${JSON.stringify(next)}::jsonb
              WHERE target_bank_id = ${current.targetBankId}`)
            return current
          }
          yield* finishFork(snapshots, current, { keepIds: readCopy }).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          if (readCopy) {
            // The branch that owns the hidden bank now may not be the one whose first read began the copy (a checkout
            // hands a parked branch's read copy to the branch it parks): it holds the copied state either way, and
            // its next read moves it by the difference to its own.
            yield* store.setReplicaOfBank(current.sourceRepoId, targetBankId, current.tables)
            return undefined
          }
          const bankName = current.request["target_bank_name"]
          if (typeof bankName === "string") {
            yield* Effect.orDie(
              sql`UPDATE banks SET name = ${bankName}, updated_at = now() WHERE bank_id = ${current.targetBankId}`
            )
          }
          if (current.request["enable_repo"] === true) {
            // The initial commit is a sliced enable begun in this transaction: durable, resumed at start-up.
            enabling = yield* startEnable(
              current.targetBankId,
              current.request["repo_name"] as string | null | undefined
            )
          }
          return undefined
        }))
        yield* betweenSlices(sliceStarted)
      }
      yield* restored(targetBankId)
      if (request["enable_repo"] === true) {
        const repoRow = enabling ?? (yield* store.repoByBank(targetBankId))
        if (repoRow !== undefined) yield* driveEnable(repoRow, targetBankId)
      }
      return request
    })

  /**
   * Forks and enables that a stopped server left part-way (a `repo_forks` row, a repo with `enable_progress`) are
   * finished in the background at start-up, each in its slices, without waiting for the client to call again.
   */
  const resumeInterrupted = Effect.gen(function*() {
    const forks = yield* Effect.orDie(sql<{ targetBankId: string }>`SELECT target_bank_id FROM repo_forks
      ORDER BY target_bank_id`)
    for (const { targetBankId } of forks) {
      yield* Effect.logInfo("resuming a repo fork a restart interrupted", { bank_id: targetBankId })
      yield* driveFork(targetBankId)
      yield* Effect.logInfo("repo fork resumed and finished", { bank_id: targetBankId })
    }
    const enables = (yield* store.listRepos).filter((row) => row.enableProgress !== null)
    for (const row of enables) {
      yield* Effect.logInfo("resuming a repo enable a restart interrupted", { repo_id: row.repoId })
      yield* driveEnable(row, row.rootBankId)
    }
  })

  /**
   * A parked branch's first read copy: its working tree copied into its hidden bank in slices, like a fork (a job
   * row of `repo_forks`, resumed at start-up if a crash interrupts it), so the copy — linear in the branch's rows —
   * never holds the database in one long transaction. Joins a copy already under way for the branch's hidden bank.
   */
  const firstCopy = (repoRow: RepoRow, branchName: string) =>
    Effect.gen(function*() {
      const bankId = yield* inTransaction(Effect.gen(function*() {
        yield* store.lockRepo(repoRow.repoId)
        const fresh = yield* repo(repoRow.repoId)
        const branch = yield* branchOf(fresh, branchName)
        if (branchName === fresh.activeBranch) return undefined
        const copy = branch.workspaceBankId
        if ((yield* forkJob(copy)) !== undefined) return copy
        if (branch.replicaTables !== null) return undefined
        const state = yield* parkedState(fresh, branch)
        // A branch parked before branches were pointers: its hidden bank was hashed in place and is its copy.
        if ((yield* branchOf(fresh, branchName)).replicaTables !== null) return undefined
        // Empties the hidden bank (normally empty already) and drops its renaming, in this transaction.
        yield* snapshots.restore(copy, {}, { rename: true, keepMap: true })
        yield* startForkJob(copy, fresh.repoId, state, { [readCopyMark]: true, branch_name: branchName })
        return copy
      }))
      if (bankId !== undefined) yield* driveFork(bankId)
    })

  /**
   * A parked branch's read copy, brought to its working tree: made in slices on the first read (`firstCopy`),
   * then moved, under the repo's lock, by the difference between the state it holds and the branch's.
   */
  const replicaOf = (repoRow: RepoRow, branchName: string) =>
    Effect.gen(function*() {
      // A checkout between the copy and the move can hand the branch another hidden bank with no copy yet: copy again.
      while (true) {
        yield* firstCopy(repoRow, branchName)
        const replica = yield* inTransaction(Effect.gen(function*() {
          yield* store.lockRepo(repoRow.repoId)
          const fresh = yield* repo(repoRow.repoId)
          const branch = yield* branchOf(fresh, branchName)
          if (branchName === fresh.activeBranch) return { bankId: fresh.rootBankId, moved: false }
          const state = yield* parkedState(fresh, branch)
          const held = (yield* branchOf(fresh, branchName)).replicaTables
          const bankId = branch.workspaceBankId
          if (held === null) return undefined
          if (rootHashOf(held) === rootHashOf(state.tables)) return { bankId, moved: false }
          const changes = yield* rowDelta(snapshots, { _tag: "Stored", tables: held, rows: {} }, storedState(state))
          yield* snapshots.applyDelta(bankId, forward(changes), { toLocal: true })
          yield* store.setReplica(fresh.repoId, branchName, state.tables)
          return { bankId, moved: true }
        }))
        if (replica !== undefined) return replica
      }
    })

  /**
   * The bank to read for `branch_name` on recall, reflect and memory/document reads: the bank itself for its
   * active branch (or `main`/`default` when it has no repo), the branch's read copy otherwise.
   */
  const readBank = Effect.fn("MemoryRepos.readBank")(function*(bankId: string, branchName: string | null | undefined) {
    if (branchName === undefined || branchName === null || branchName === "") return bankId
    const row = yield* store.repoByBank(bankId)
    if (row === undefined) {
      if (branchName === "main" || branchName === "default") return bankId
      return yield* NotFound.of("branch", branchName)
    }
    if (branchName === row.activeBranch) return bankId
    const branch = yield* store.branch(row.repoId, branchName)
    if (branch === undefined) return yield* NotFound.of("branch", branchName)
    const current = branch.stateTables !== null && branch.replicaTables !== null &&
      rootHashOf(branch.stateTables) === rootHashOf(branch.replicaTables)
    if (current) return branch.workspaceBankId
    // A first read copies the branch (seconds on a big bank): a reader that gives up meanwhile must not roll the
    // copy back, or a client whose timeout is shorter than the copy would never get an answer.
    return yield* outlivingCaller(Effect.gen(function*() {
      const replica = yield* replicaOf(row, branchName)
      if (replica.moved) yield* restored(replica.bankId)
      return replica.bankId
    }))
  })

  yield* resumeInterrupted.pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning("could not resume an interrupted repo fork or enable; the same call resumes it", cause)
    ),
    Effect.forkScoped
  )

  return {
    enable,
    create,
    list,
    get,
    rootBankOf,
    forBank,
    repoIdOfBank,
    branches,
    branchesOfBank,
    createBranch,
    deleteBranch,
    checkout,
    commit,
    status,
    log,
    diff,
    resetHard,
    fork,
    readBank
  }
})

export class MemoryRepos extends Context.Service<MemoryRepos, Effect.Success<typeof makeMemoryRepos>>()(
  "engram/repos/MemoryRepos"
) {
  static readonly layer = Layer.effect(MemoryRepos, makeMemoryRepos).pipe(
    Layer.provideMerge(Layer.merge(Snapshots.layer, GarbageCollection.layer))
  )
}

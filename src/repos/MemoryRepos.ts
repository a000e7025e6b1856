/**
 * Memory repos: git-like versioning of a whole bank. The root bank is the working tree of the active branch;
 * other branches' working trees are hidden banks. Every operation that moves state runs in one transaction
 * under the repo's row lock, so a crash mid-checkout or mid-reset leaves the old state or the new one.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../brain/BankBrains.ts"
import { Conflict, NotFound, ValidationError } from "../domain/Errors.ts"
import type { BranchView, DiffResponse, RepoSummary, StatusResponse } from "../domain/Repo.ts"
import { commitView, isoOf, makeRepoStore, workspaceBankId } from "./RepoStore.ts"
import type { BranchRow, CommitRow, RepoRow } from "./RepoStore.ts"
import { diffSides } from "./RepoDiff.ts"
import type { Side } from "./RepoDiff.ts"
import { backward, forward, rowDelta } from "./RowDelta.ts"
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

const makeMemoryRepos = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const snapshots = yield* Snapshots
  const brains = yield* BankBrains
  const store = yield* makeRepoStore

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
    Effect.flatMap(store.repoById(repoId), (row) => row === undefined ? NotFound.of("repo", repoId) : Effect.succeed(row))

  const commitOf = (repoRow: RepoRow, commitId: string) =>
    Effect.flatMap(store.commit(commitId), (row) =>
      row === undefined || row.repoId !== repoRow.repoId ? NotFound.of("commit", commitId) : Effect.succeed(row))

  const branchOf = (repoRow: RepoRow, name: string) =>
    Effect.flatMap(store.branch(repoRow.repoId, name), (row) =>
      row === undefined ? NotFound.of("branch", name) : Effect.succeed(row))

  const sourceOf = (repoRow: RepoRow, branch: BranchRow): Source =>
    branch.branchName === repoRow.activeBranch
      ? { bankId: repoRow.rootBankId, workspace: false }
      : { bankId: branch.workspaceBankId, workspace: true }

  const headTables = (head: CommitRow | undefined) => head?.tables ?? {}

  const stored = (commit: CommitRow): Side => ({ _tag: "Stored", tables: commit.tables, rows: commit.rowCounts })
  const live = (source: Source) =>
    Effect.map(snapshots.capture(source, false), (capture): Side => ({ _tag: "Live", capture, source }))

  const emptySide: Side = { _tag: "Stored", tables: {}, rows: {} }

  const statusOf = (repoRow: RepoRow, branch: BranchRow) =>
    Effect.gen(function*() {
      const head = branch.headCommitId === null ? undefined : yield* store.commit(branch.headCommitId)
      const source = sourceOf(repoRow, branch)
      const difference = yield* diffSides(snapshots, head === undefined ? emptySide : stored(head), yield* live(source), {
        listRows: false
      })
      return {
        repo_id: repoRow.repoId,
        branch_name: branch.branchName,
        workspace_bank_id: source.bankId,
        head_commit_id: branch.headCommitId,
        dirty: difference.changedComponents.length > 0,
        changed_components: difference.changedComponents,
        table_deltas: difference.tableDeltas
      } satisfies StatusResponse
    })

  const branchViews = (repoRow: RepoRow) =>
    Effect.gen(function*() {
      const rows = yield* store.branches(repoRow.repoId)
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

  /** Commits the active workspace; answers HEAD unchanged when nothing changed (no empty commits). */
  const commitActive = (repoRow: RepoRow, message: string, actor: string) =>
    Effect.gen(function*() {
      const branch = yield* branchOf(repoRow, repoRow.activeBranch)
      const head = branch.headCommitId === null ? undefined : yield* store.commit(branch.headCommitId)
      const capture = yield* snapshots.capture({ bankId: repoRow.rootBankId, workspace: false }, headTables(head))
      if (head !== undefined && head.rootHash === capture.rootHash) return { commit: head, created: false }
      const row = yield* store.insertCommit({
        commitId: crypto.randomUUID(),
        repoId: repoRow.repoId,
        parentCommitId: head?.commitId ?? null,
        branchName: branch.branchName,
        message,
        actor,
        rootHash: capture.rootHash,
        tables: Object.fromEntries(Object.entries(capture.tables).map(([name, state]) => [name, state.hash])),
        rowCounts: Object.fromEntries(Object.entries(capture.tables).map(([name, state]) => [name, state.rows])),
        bytesAdded: capture.bytesAdded
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
      return repoRow
    })

  const enable = Effect.fn("MemoryRepos.enable")(function*(bankId: string, name: string | null | undefined) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    const repoRow = yield* inTransaction(enableIn(bankId, name))
    return yield* summary(repoRow)
  })

  const create = Effect.fn("MemoryRepos.create")(function*(input: {
    readonly bank_id: string
    readonly repo_name?: string | null | undefined
    readonly source_bank_id?: string | null | undefined
  }) {
    if ((yield* store.repoByBank(input.bank_id)) !== undefined) {
      return yield* new Conflict({ detail: `bank_id: bank '${input.bank_id}' already has a memory repo` })
    }
    const source = input.source_bank_id
    if (source !== undefined && source !== null && !(yield* bankExists(source))) return yield* NotFound.of("bank", source)
    // Cloning restores the source's tables over the target: into an existing bank it would silently replace what the
    // bank holds. A clone goes into a new bank; an existing bank gets a repo with `enable` (or this call, no source).
    if (source !== undefined && source !== null && source !== input.bank_id && (yield* bankExists(input.bank_id))) {
      return yield* new Conflict({
        detail: `bank_id: bank '${input.bank_id}' already exists and cloning '${source}' into it would replace its ` +
          "memories; clone into a new bank_id"
      })
    }
    const repoRow = yield* inTransaction(Effect.gen(function*() {
      yield* Effect.orDie(sql`INSERT INTO banks (bank_id) VALUES (${input.bank_id}) ON CONFLICT (bank_id) DO NOTHING`)
      if (source !== undefined && source !== null && source !== input.bank_id) {
        const captured = yield* snapshots.capture({ bankId: source, workspace: false }, {})
        yield* snapshots.restore(input.bank_id, hashes(captured.tables), { rename: true, keepMap: false })
      }
      return yield* enableIn(input.bank_id, input.repo_name)
    }))
    yield* restored(input.bank_id)
    return yield* summary(repoRow)
  })

  const hashes = (tables: Readonly<Record<string, { readonly hash: string }>>) =>
    Object.fromEntries(Object.entries(tables).map(([name, state]) => [name, state.hash]))

  const list = Effect.fn("MemoryRepos.list")(function*() {
    return yield* Effect.forEach(yield* store.listRepos, summary)
  })

  const get = Effect.fn("MemoryRepos.get")(function*(repoId: string) {
    return yield* summary(yield* repo(repoId))
  })

  const forBank = Effect.fn("MemoryRepos.forBank")(function*(bankId: string) {
    if (!(yield* bankExists(bankId))) return yield* NotFound.of("bank", bankId)
    const row = yield* store.repoByBank(bankId)
    return row === undefined ? null : yield* summary(row)
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

  const createBranch = Effect.fn("MemoryRepos.createBranch")(function*(
    repoId: string,
    input: { readonly branch_name: string; readonly from_commit_id?: string | null | undefined }
  ) {
    const workspace = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      if ((yield* store.branch(repoId, input.branch_name)) !== undefined) {
        return yield* new Conflict({ detail: `branch_name: branch '${input.branch_name}' already exists` })
      }
      const active = yield* branchOf(repoRow, repoRow.activeBranch)
      const from = input.from_commit_id
      let tables: Readonly<Record<string, string>>
      let head: string | null
      if (from !== undefined && from !== null) {
        const commit = yield* commitOf(repoRow, from)
        tables = commit.tables
        head = commit.commitId
      } else {
        const current = active.headCommitId === null ? undefined : yield* store.commit(active.headCommitId)
        const captured = yield* snapshots.capture({ bankId: repoRow.rootBankId, workspace: false }, headTables(current))
        tables = hashes(captured.tables)
        head = active.headCommitId
      }
      const workspace = workspaceBankId(repoId, input.branch_name)
      yield* snapshots.restore(workspace, tables, { rename: true, keepMap: true })
      yield* store.upsertBranch(repoId, input.branch_name, head, workspace)
      yield* store.touch(repoId)
      return workspace
    }))
    yield* restored(workspace)
    const repoRow = yield* repo(repoId)
    const views = yield* branchViews(repoRow)
    return views.find((view) => view.branch_name === input.branch_name)!
  })

  const checkout = Effect.fn("MemoryRepos.checkout")(function*(repoId: string, branchName: string) {
    const touched = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      const target = yield* branchOf(repoRow, branchName)
      if (branchName === repoRow.activeBranch) return []
      const current = yield* branchOf(repoRow, repoRow.activeBranch)
      const currentHead = current.headCommitId === null ? undefined : yield* store.commit(current.headCommitId)
      const targetHead = target.headCommitId === null ? undefined : yield* store.commit(target.headCommitId)
      // Both working trees are stored first (uncommitted work included), then swapped in place: the root bank
      // gets only the rows that differ, and the target's hidden bank becomes the parked branch's workspace by
      // getting the same difference the other way, so a checkout writes O(changed rows), not O(bank).
      const rootState = yield* snapshots.capture({ bankId: repoRow.rootBankId, workspace: false }, headTables(currentHead))
      const targetSource: Source = { bankId: target.workspaceBankId, workspace: true }
      const targetState = yield* snapshots.capture(targetSource, headTables(targetHead))
      const changes = yield* rowDelta(
        snapshots,
        { _tag: "Live", capture: rootState, source: { bankId: repoRow.rootBankId, workspace: false } },
        { _tag: "Live", capture: targetState, source: targetSource }
      )
      const parked = target.workspaceBankId
      yield* snapshots.applyDelta(repoRow.rootBankId, forward(changes), { toLocal: false })
      yield* snapshots.applyDelta(parked, backward(changes), { toLocal: true })
      yield* store.upsertBranch(repoId, current.branchName, current.headCommitId, parked)
      yield* store.upsertBranch(repoId, target.branchName, target.headCommitId, repoRow.rootBankId)
      yield* store.setActive(repoId, branchName)
      return [repoRow.rootBankId, parked]
    }))
    yield* Effect.forEach(touched, restored, { discard: true })
    return yield* summary(yield* repo(repoId))
  })

  const commit = Effect.fn("MemoryRepos.commit")(function*(
    repoId: string,
    input: { readonly message: string; readonly actor?: string | null | undefined }
  ) {
    const { commit, created } = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      return yield* commitActive(yield* repo(repoId), input.message, input.actor ?? "anonymous")
    }))
    return { ...commitView(commit), created }
  })

  const status = Effect.fn("MemoryRepos.status")(function*(repoId: string, branchName: string | undefined) {
    const repoRow = yield* repo(repoId)
    return yield* statusOf(repoRow, yield* branchOf(repoRow, branchName ?? repoRow.activeBranch))
  })

  const log = Effect.fn("MemoryRepos.log")(function*(
    repoId: string,
    query: { readonly branch_name?: string | undefined; readonly limit?: number | undefined; readonly offset?: number | undefined }
  ) {
    const repoRow = yield* repo(repoId)
    const branch = yield* branchOf(repoRow, query.branch_name ?? repoRow.activeBranch)
    const limit = Math.min(200, Math.max(1, query.limit ?? 50))
    const offset = Math.max(0, query.offset ?? 0)
    const rows = branch.headCommitId === null ? [] : yield* store.history(branch.headCommitId, limit, offset)
    return { repo_id: repoId, branch_name: branch.branchName, commits: rows.map(commitView), limit, offset }
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
          ? { side: yield* live(sourceOf(repoRow, branch)), label: `workspace:${branch.branchName}` }
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
      const target = yield* commitOf(repoRow, input.commit_id)
      const active = yield* branchOf(repoRow, repoRow.activeBranch)
      const head = active.headCommitId === null ? undefined : yield* store.commit(active.headCommitId)
      const rootSource: Source = { bankId: repoRow.rootBankId, workspace: false }
      const current = yield* snapshots.capture(rootSource, false)
      const headHashes = headTables(head)
      const names = new Set([...Object.keys(headHashes), ...Object.keys(current.tables)])
      const dirty = [...names].some((name) => headHashes[name] !== current.tables[name]?.hash)
      if (input.force !== true && dirty) {
        return yield* ValidationError.single("force", "Workspace is dirty. Commit changes first or pass force=true.")
      }
      // Only the rows that differ between the workspace and the commit are written.
      const changes = yield* rowDelta(snapshots, { _tag: "Live", capture: current, source: rootSource }, stored(target))
      yield* snapshots.applyDelta(repoRow.rootBankId, forward(changes), { toLocal: false })
      yield* store.upsertBranch(repoId, active.branchName, target.commitId, repoRow.rootBankId)
      yield* store.touch(repoId)
      return repoRow.rootBankId
    }))
    yield* restored(root)
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
    if (yield* bankExists(input.target_bank_id)) {
      return yield* new Conflict({ detail: `target_bank_id: bank '${input.target_bank_id}' already exists` })
    }
    const done = yield* inTransaction(Effect.gen(function*() {
      yield* store.lockRepo(repoId)
      const repoRow = yield* repo(repoId)
      let tables: Readonly<Record<string, string>>
      let ref: string
      let branchName: string | null = null
      let commitId: string | null = null
      if (hasCommit) {
        const commit = yield* commitOf(repoRow, input.source_commit_id!)
        tables = commit.tables
        commitId = commit.commitId
        ref = `commit:${commit.commitId}`
      } else {
        const branch = yield* branchOf(repoRow, input.source_branch ?? repoRow.activeBranch)
        branchName = branch.branchName
        commitId = branch.headCommitId
        if (input.include_workspace === true) {
          const captured = yield* snapshots.capture(sourceOf(repoRow, branch), {})
          tables = hashes(captured.tables)
          ref = `workspace:${branch.branchName}`
        } else {
          if (branch.headCommitId === null) {
            return yield* ValidationError.single("source_branch", `branch '${branch.branchName}' has no commit`)
          }
          tables = (yield* commitOf(repoRow, branch.headCommitId)).tables
          ref = `branch:${branch.branchName}`
        }
      }
      yield* snapshots.restore(input.target_bank_id, tables, { rename: true, keepMap: false })
      if (input.target_bank_name !== undefined && input.target_bank_name !== null) {
        yield* Effect.orDie(
          sql`UPDATE banks SET name = ${input.target_bank_name}, updated_at = now() WHERE bank_id = ${input.target_bank_id}`
        )
      }
      const forked = input.enable_repo === true ? yield* enableIn(input.target_bank_id, input.repo_name) : null
      return { ref, branchName, commitId, forked }
    }))
    const name = yield* Effect.orDie(sql<{ name: string | null }>`SELECT name FROM banks WHERE bank_id = ${input.target_bank_id}`)
    return {
      bank_id: input.target_bank_id,
      bank_name: name[0]?.name ?? null,
      source_repo_id: repoId,
      source_ref: done.ref,
      source_branch: done.branchName,
      source_commit_id: done.commitId,
      include_workspace: input.include_workspace === true,
      repo_enabled: done.forked !== null,
      repo: done.forked === null ? null : yield* summary(done.forked)
    }
  })

  /**
   * The bank to read for `branch_name` on recall, reflect and memory/document reads: the bank itself for its
   * active branch (or `main`/`default` when it has no repo), the branch's hidden workspace otherwise.
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
    return branch.workspaceBankId
  })

  return {
    enable,
    create,
    list,
    get,
    forBank,
    branches,
    branchesOfBank,
    createBranch,
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
  static readonly layer = Layer.effect(MemoryRepos, makeMemoryRepos).pipe(Layer.provideMerge(Snapshots.layer))
}

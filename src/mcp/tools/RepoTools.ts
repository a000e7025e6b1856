/**
 * MCP tools for the bank's memory repo (git-like versioning of a bank): turn repo mode on, read the repo, its
 * branches, status, log and diffs, commit, branch, check out, delete a branch, reset and fork into a new bank. Each works on the
 * repo of the bank the call resolves to, through `MemoryRepos` as the REST handlers do; a fork's target bank must
 * be one the caller's key reaches, as on REST.
 */
import { Effect, Schema } from "effect"
import { requireBank } from "../../auth/BankAccess.ts"
import { NotFound } from "../../domain/Errors.ts"
import {
  BranchName,
  CommitRequest,
  CreateBranchRequest,
  EnableRepoRequest,
  ForkRequest,
  ResetRequest
} from "../../domain/Repo.ts"
import { Offset } from "../../http/api/MemoriesApi.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { defineTool, described, optional } from "../McpTool.ts"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const branch = (description: string) => optional(BranchName, description)

export const repoTools = Effect.gen(function*() {
  const repos = yield* MemoryRepos

  /**
   * The id of the bank's repo; a bank without one is told how to get one. From the repo's row: the summary
   * (`forBank`) would compute every branch's status before the tool's own work.
   */
  const repoOf = (bankId: string) =>
    Effect.flatMap(repos.repoIdOfBank(bankId), (repoId) =>
      repoId === null
        ? Effect.fail(
          new NotFound({
            detail: `bank '${bankId}' has no memory repo: enable_repo turns repo mode on`,
            resource: "memory repo",
            id: bankId
          })
        )
        : Effect.succeed(repoId))

  const inRepo = <A, E>(bankId: string, use: (repoId: string) => Effect.Effect<A, E>) =>
    Effect.flatMap(repoOf(bankId), use)

  return [
    defineTool({
      name: "enable_repo",
      title: "Turn on the bank's memory repo",
      description: "Turn repo mode on for the bank: git-like versioning of its memories with a branch `main` and an " +
        "initial commit. Idempotent: on a bank that has a repo it returns that repo.",
      fields: {
        repo_name: described(EnableRepoRequest.fields.repo_name, "A name for the repo; default the bank's id.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { repo_name }) => repos.enable(bankId, repo_name)
    }),
    defineTool({
      name: "get_repo",
      title: "Read the bank's memory repo",
      description: "The bank's memory repo: its id, active branch, head commit and branches; `repo` is null when " +
        "repo mode is off (enable_repo turns it on).",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => Effect.map(repos.forBank(bankId), (repo) => ({ repo }))
    }),
    defineTool({
      name: "list_repo_branches",
      title: "List the repo's branches",
      description: "The branches of the bank's memory repo: which is active, each head commit and whether its " +
        "working tree has uncommitted changes (`dirty`).",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => Effect.map(repos.branchesOfBank(bankId), (branches) => ({ branches }))
    }),
    defineTool({
      name: "repo_status",
      title: "Repo status",
      description: "What changed in a branch's working tree since its head commit: `dirty`, the changed components " +
        "and per-table row deltas (added, removed, changed). Default the active branch.",
      fields: { branch_name: branch("The branch to inspect; default the active branch.") },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { branch_name }) => inRepo(bankId, (repoId) => repos.status(repoId, branch_name))
    }),
    defineTool({
      name: "commit_repo",
      title: "Commit the bank's memories",
      description: "Commit the active branch's working tree (the bank as it is now) with a message. With nothing " +
        "changed, the head commit is returned with `created: false`.",
      fields: {
        message: described(CommitRequest.fields.message, "What this commit records, e.g. 'Imported Q3 notes'."),
        actor: described(CommitRequest.fields.actor, "Who commits; default 'anonymous'.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, request) => inRepo(bankId, (repoId) => repos.commit(repoId, request))
    }),
    defineTool({
      name: "repo_log",
      title: "Repo commit log",
      description: "A branch's commits, newest first, each with its message, actor, time and row statistics. " +
        "Default the active branch.",
      fields: {
        branch_name: branch("The branch whose log to read; default the active branch."),
        limit: optional(between(1, 200), "How many commits to return (1-200, default 50)."),
        offset: optional(Offset, "How many commits to skip (paging).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, query) => inRepo(bankId, (repoId) => repos.log(repoId, query))
    }),
    defineTool({
      name: "create_repo_branch",
      title: "Create a repo branch",
      description: "Create a branch from a commit (from_commit_id, see repo_log) or, without one, from the active " +
        "working tree. The branch's working tree is kept apart until checkout_repo_branch makes it active.",
      fields: {
        branch_name: described(CreateBranchRequest.fields.branch_name, "The new branch's name, e.g. 'experiment'."),
        from_commit_id: described(
          CreateBranchRequest.fields.from_commit_id,
          "The commit to branch from; default the active working tree."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, request) => inRepo(bankId, (repoId) => repos.createBranch(repoId, request))
    }),
    defineTool({
      name: "checkout_repo_branch",
      title: "Check out a repo branch",
      description: "Make a branch active: its working tree becomes what the bank holds (recall and retain then use " +
        "it); the previously active branch keeps its own working tree. Nothing is lost.",
      fields: { branch_name: described(BranchName, "The branch to make active (see list_repo_branches).") },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { branch_name }) => inRepo(bankId, (repoId) => repos.checkout(repoId, branch_name))
    }),
    defineTool({
      name: "delete_repo_branch",
      title: "Delete a repo branch",
      description: "Delete a branch that is not active: its name and its uncommitted work go; commits that no other " +
        "branch reaches are collected later. Returns the branches that remain. The active branch cannot be deleted " +
        "(check out another first).",
      fields: { branch_name: described(BranchName, "The branch to delete (see list_repo_branches).") },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { branch_name }) =>
        inRepo(bankId, (repoId) => Effect.map(repos.deleteBranch(repoId, branch_name), (branches) => ({ branches })))
    }),
    defineTool({
      name: "repo_diff",
      title: "Diff commits or branches",
      description: "Rows added, removed and changed per table between two commits, two branches, or a branch and " +
        "its working tree (include_workspace). With nothing given: the active branch's head against its working " +
        "tree. rows=true lists the changed rows (paged with limit and offset, one table with `table`).",
      fields: {
        from_commit_id: optional(Schema.String, "Compare from this commit (or give from_branch)."),
        to_commit_id: optional(Schema.String, "Compare to this commit (or give to_branch)."),
        from_branch: branch("Compare from this branch's head."),
        to_branch: branch("Compare to this branch's head."),
        include_workspace: optional(Schema.Boolean, "Compare against the working tree of the `to` side."),
        rows: optional(Schema.Boolean, "List the changed rows, not only the counts."),
        table: optional(Schema.String, "List rows of this table only (e.g. memory_units)."),
        limit: optional(between(1, 1000), "How many rows to list (1-1000)."),
        offset: optional(Offset, "How many rows to skip (paging).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, query) => inRepo(bankId, (repoId) => repos.diff(repoId, query))
    }),
    defineTool({
      name: "reset_repo",
      title: "Reset the bank to a commit",
      description: "Restore the active working tree to a commit (see repo_log): the bank's memories become what " +
        "they were then. Refused while there are uncommitted changes unless force is true, which discards them.",
      fields: {
        commit_id: described(ResetRequest.fields.commit_id, "The commit to restore."),
        force: described(ResetRequest.fields.force, "Discard uncommitted changes (default false).")
      },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: (bankId, request) => inRepo(bankId, (repoId) => repos.resetHard(repoId, request))
    }),
    defineTool({
      name: "fork_repo_bank",
      title: "Fork the repo into a new bank",
      description: "Copy a branch head, a commit or a live working tree of the bank's repo into a new bank " +
        "(target_bank_id, which must not exist yet; ids are renamed), optionally with repo mode on there.",
      fields: {
        target_bank_id: described(ForkRequest.fields.target_bank_id, "The new bank's id."),
        target_bank_name: described(ForkRequest.fields.target_bank_name, "The new bank's name."),
        source_branch: described(
          ForkRequest.fields.source_branch,
          "Fork this branch's head (or give source_commit_id)."
        ),
        source_commit_id: described(ForkRequest.fields.source_commit_id, "Fork this commit."),
        include_workspace: described(
          ForkRequest.fields.include_workspace,
          "Fork the branch's working tree, uncommitted changes included."
        ),
        enable_repo: described(ForkRequest.fields.enable_repo, "Turn repo mode on in the new bank."),
        repo_name: described(ForkRequest.fields.repo_name, "The new bank's repo name, with enable_repo.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, request) =>
        Effect.andThen(
          requireBank(request.target_bank_id, "target_bank_id"),
          inRepo(bankId, (repoId) => repos.fork(repoId, request))
        )
    })
  ]
})

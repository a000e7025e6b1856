/**
 * Memory repo routes: git-like versioning of a bank (create/enable, branches, checkout, commit, status, log,
 * diff, hard reset, fork into a new bank). Paths are the ones existing clients call.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { Conflict, NotFound, ValidationError } from "../../domain/Errors.ts"
import {
  BankRepoResponse,
  BranchListResponse,
  BranchName,
  BranchView,
  CheckoutRequest,
  CommitRequest,
  CommitResponse,
  CreateBranchRequest,
  CreateRepoRequest,
  DiffResponse,
  EnableRepoRequest,
  ForkRequest,
  ForkResponse,
  LogResponse,
  RepoListResponse,
  RepoSummary,
  ResetRequest,
  StatusResponse
} from "../../domain/Repo.ts"
import { Offset } from "./MemoriesApi.ts"

const repo = { repo_id: Schema.String }
const bank = { bank_id: BankId }
const errors = [NotFound, ValidationError, Conflict]

export class ReposApi extends HttpApiGroup.make("repos")
  .add(
    HttpApiEndpoint.post("create", "/v1/default/repos", {
      payload: CreateRepoRequest,
      success: RepoSummary,
      error: errors
    })
      .annotate(
        OpenApi.Description,
        "Create a memory repo on a bank (created if missing), optionally cloning `source_bank_id` into it first."
      ),
    HttpApiEndpoint.get("list", "/v1/default/repos", { success: RepoListResponse }),
    HttpApiEndpoint.get("get", "/v1/default/repos/:repo_id", { params: repo, success: RepoSummary, error: NotFound }),
    HttpApiEndpoint.get("bankRepo", "/v1/default/banks/:bank_id/repo", {
      params: bank,
      success: BankRepoResponse,
      error: NotFound
    }),
    HttpApiEndpoint.post("enable", "/v1/default/banks/:bank_id/repos/enable", {
      params: bank,
      payload: [EnableRepoRequest, Schema.Null],
      success: RepoSummary,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Turn repo mode on for a bank (idempotent): branch `main` with an initial commit."
    ),
    HttpApiEndpoint.get("bankBranches", "/v1/default/banks/:bank_id/repo/branches", {
      params: bank,
      success: BranchListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("branches", "/v1/default/repos/:repo_id/branches", {
      params: repo,
      success: BranchListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.post("createBranch", "/v1/default/repos/:repo_id/branches", {
      params: repo,
      payload: CreateBranchRequest,
      success: BranchView,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Create a branch from a commit, or from the active workspace (its uncommitted work stashed): a row naming a commit."
    ),
    HttpApiEndpoint.delete("deleteBranch", "/v1/default/repos/:repo_id/branches/:branch_name", {
      params: { ...repo, branch_name: BranchName },
      success: BranchListResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Delete a branch that is not active; its commits stay in the log of the branches that reach them."
    ),
    HttpApiEndpoint.post("checkout", "/v1/default/repos/:repo_id/checkout", {
      params: repo,
      payload: CheckoutRequest,
      success: RepoSummary,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Make a branch active: its working tree moves into the root bank in one transaction."
    ),
    HttpApiEndpoint.post("fork", "/v1/default/repos/:repo_id/fork-bank", {
      params: repo,
      payload: ForkRequest,
      success: ForkResponse,
      error: errors
    }).annotate(OpenApi.Description, "Copy a branch head, a commit or a live workspace into a new bank (ids renamed)."),
    HttpApiEndpoint.post("commit", "/v1/default/repos/:repo_id/commit", {
      params: repo,
      payload: CommitRequest,
      success: CommitResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Commit the active workspace; with no change, HEAD is answered with `created: false`."
    ),
    HttpApiEndpoint.get("status", "/v1/default/repos/:repo_id/status", {
      params: repo,
      query: { branch_name: Schema.optionalKey(BranchName) },
      success: StatusResponse,
      error: errors
    }),
    HttpApiEndpoint.get("log", "/v1/default/repos/:repo_id/log", {
      params: repo,
      query: {
        branch_name: Schema.optionalKey(BranchName),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))),
        offset: Schema.optionalKey(Offset)
      },
      success: LogResponse,
      error: errors
    }),
    HttpApiEndpoint.get("diff", "/v1/default/repos/:repo_id/diff", {
      params: repo,
      query: {
        from_commit_id: Schema.optionalKey(Schema.String),
        to_commit_id: Schema.optionalKey(Schema.String),
        from_branch: Schema.optionalKey(BranchName),
        to_branch: Schema.optionalKey(BranchName),
        include_workspace: Schema.optionalKey(Schema.Boolean),
        rows: Schema.optionalKey(Schema.Boolean.annotate({ description: "list the changed rows (paged)" })),
        table: Schema.optionalKey(Schema.String.annotate({ description: "list rows of this table only" })),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
        offset: Schema.optionalKey(Offset)
      },
      success: DiffResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Rows added, removed and changed per table between two commits, branches, or a branch and its workspace."
    ),
    HttpApiEndpoint.post("resetHard", "/v1/default/repos/:repo_id/reset-hard", {
      params: repo,
      payload: ResetRequest,
      success: StatusResponse,
      error: errors
    }).annotate(OpenApi.Description, "Restore the active workspace to a commit (refused while dirty unless `force`).")
  )
  .annotateMerge(OpenApi.annotations({ title: "Memory repos", description: "Git-like versioning of a bank" }))
{}

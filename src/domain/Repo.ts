/**
 * Memory repos as clients see them: requests to create, enable, branch, check out, commit, reset and fork, and
 * the summary, branch, commit, status, diff and fork views (field names as the spec lists them).
 */
import { Schema } from "effect"
import { BankId } from "./Bank.ts"

/** A branch name is used in URLs' query strings and hashed into a workspace id; keep it plain. */
export const BranchName = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(100),
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._/-]*$/, {
    message: "must start with a letter or digit and contain only letters, digits, '.', '_', '/' or '-'"
  })
)

const Text = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))
const Time = Schema.NullOr(Schema.String)

export const CreateRepoRequest = Schema.Struct({
  bank_id: BankId,
  repo_name: Schema.optionalKey(Schema.NullOr(Text(200))),
  source_bank_id: Schema.optionalKey(Schema.NullOr(BankId))
}).annotate({ identifier: "CreateRepoRequest" })

export const EnableRepoRequest = Schema.Struct({
  repo_name: Schema.optionalKey(Schema.NullOr(Text(200)))
}).annotate({ identifier: "EnableRepoRequest" })

export const CreateBranchRequest = Schema.Struct({
  branch_name: BranchName,
  from_commit_id: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "CreateBranchRequest" })

export const CheckoutRequest = Schema.Struct({ branch_name: BranchName }).annotate({ identifier: "CheckoutRequest" })

export const CommitRequest = Schema.Struct({
  message: Text(2000),
  actor: Schema.optionalKey(Schema.NullOr(Text(200)))
}).annotate({ identifier: "CommitRequest" })

export const ResetRequest = Schema.Struct({
  commit_id: Text(100),
  force: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ResetRequest" })

export const ForkRequest = Schema.Struct({
  target_bank_id: BankId,
  target_bank_name: Schema.optionalKey(Schema.NullOr(Text(200))),
  source_branch: Schema.optionalKey(Schema.NullOr(BranchName)),
  source_commit_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  include_workspace: Schema.optionalKey(Schema.Boolean),
  enable_repo: Schema.optionalKey(Schema.Boolean),
  repo_name: Schema.optionalKey(Schema.NullOr(Text(200)))
}).annotate({ identifier: "ForkRequest" })

export const BranchView = Schema.Struct({
  branch_name: Schema.String,
  workspace_bank_id: Schema.String,
  is_active: Schema.Boolean,
  head_commit_id: Schema.NullOr(Schema.String),
  head_message: Schema.NullOr(Schema.String),
  head_created_at: Time,
  dirty: Schema.Boolean
}).annotate({ identifier: "RepoBranch" })
export type BranchView = typeof BranchView.Type

export const BranchListResponse = Schema.Struct({ branches: Schema.Array(BranchView) })

export const RepoSummary = Schema.Struct({
  repo_id: Schema.String,
  root_bank_id: Schema.String,
  name: Schema.String,
  active_branch: Schema.String,
  head_commit_id: Schema.NullOr(Schema.String),
  head_message: Schema.NullOr(Schema.String),
  head_created_at: Time,
  created_at: Time,
  updated_at: Time,
  branches: Schema.NullOr(Schema.Array(BranchView))
}).annotate({ identifier: "RepoSummary" })
export type RepoSummary = typeof RepoSummary.Type

export const RepoListResponse = Schema.Struct({ repos: Schema.Array(RepoSummary) })
export const BankRepoResponse = Schema.Struct({ repo: Schema.NullOr(RepoSummary) })

export const CommitView = Schema.Struct({
  commit_id: Schema.String,
  repo_id: Schema.String,
  parent_commit_id: Schema.NullOr(Schema.String),
  branch_name: Schema.String,
  message: Schema.String,
  actor: Schema.String,
  root_manifest_hash: Schema.String,
  stats: Schema.Struct({
    rows: Schema.Record(Schema.String, Schema.Int),
    bytes_added: Schema.Number
  }),
  created_at: Time
}).annotate({ identifier: "RepoCommit" })
export type CommitView = typeof CommitView.Type

export const CommitResponse = Schema.Struct({
  ...CommitView.fields,
  created: Schema.Boolean.annotate({ description: "false when nothing changed and HEAD is answered unchanged" })
}).annotate({ identifier: "RepoCommitResponse" })

export const LogResponse = Schema.Struct({
  repo_id: Schema.String,
  branch_name: Schema.String,
  commits: Schema.Array(CommitView),
  total: Schema.Int.annotate({ description: "commits reachable from the branch's HEAD" }),
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "RepoLog" })

export const TableDelta = Schema.Struct({
  before: Schema.Int,
  after: Schema.Int,
  delta: Schema.Int,
  added: Schema.Int,
  removed: Schema.Int,
  changed: Schema.Int
}).annotate({ identifier: "RepoTableDelta" })
export type TableDelta = typeof TableDelta.Type

export const StatusResponse = Schema.Struct({
  repo_id: Schema.String,
  branch_name: Schema.String,
  workspace_bank_id: Schema.String,
  head_commit_id: Schema.NullOr(Schema.String),
  dirty: Schema.Boolean,
  changed_components: Schema.Array(Schema.String),
  table_deltas: Schema.Record(Schema.String, TableDelta),
  stored_bytes: Schema.optionalKey(Schema.Number).annotate({
    description: "the bytes the repo's commits added to the object store (the sum of their stats.bytes_added); " +
      "stashed uncommitted work is not counted, and objects another repo stored first are counted there"
  }),
  enabling: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    phase: Schema.Literals(["rows", "tree"]),
    rows_done: Schema.Int,
    tables_done: Schema.Int,
    tables_total: Schema.Int
  }))).annotate({
    description: "while the first enable runs in slices: how far it got (the initial commit does not exist yet)"
  })
}).annotate({ identifier: "RepoStatus" })
export type StatusResponse = typeof StatusResponse.Type

export const RowChange = Schema.Struct({
  table: Schema.String,
  key: Schema.String.annotate({ description: "the row's primary key (without bank_id) as a JSON array" }),
  change: Schema.Literals(["added", "removed", "changed"])
}).annotate({ identifier: "RepoRowChange" })
export type RowChange = typeof RowChange.Type

export const DiffResponse = Schema.Struct({
  repo_id: Schema.String,
  from_ref: Schema.String,
  to_ref: Schema.String,
  dirty: Schema.Boolean,
  changed_components: Schema.Array(Schema.String),
  table_deltas: Schema.Record(Schema.String, TableDelta),
  rows: Schema.NullOr(Schema.Struct({
    items: Schema.Array(RowChange),
    total: Schema.Int,
    limit: Schema.Int,
    offset: Schema.Int
  }))
}).annotate({ identifier: "RepoDiff" })
export type DiffResponse = typeof DiffResponse.Type

export const ForkResponse = Schema.Struct({
  bank_id: Schema.String,
  bank_name: Schema.NullOr(Schema.String),
  source_repo_id: Schema.String,
  source_ref: Schema.String,
  source_branch: Schema.NullOr(Schema.String),
  source_commit_id: Schema.NullOr(Schema.String),
  include_workspace: Schema.Boolean,
  repo_enabled: Schema.Boolean,
  repo: Schema.NullOr(RepoSummary)
}).annotate({ identifier: "RepoForkResponse" })

/** The ordered list of schema migrations, forward only: add a new numbered file, never edit a landed one. */
import banksAndOperations from "./0001_banks_and_operations.ts"
import memory from "./0002_memory.ts"
import retain from "./0003_retain.ts"
import llmRequests from "./0004_llm_requests.ts"
import fileUploads from "./0005_file_uploads.ts"
import linkIndexes from "./0006_link_indexes.ts"
import webhooks from "./0007_webhooks.ts"
import directives from "./0008_directives.ts"
import mentalModels from "./0009_mental_models.ts"
import consolidation from "./0010_consolidation.ts"
import timeWindowIndexes from "./0011_time_window_indexes.ts"
import memoryUnitChanges from "./0012_memory_unit_changes.ts"
import entityMentionRecount from "./0013_entity_mention_recount.ts"
import readViewOrderIndexes from "./0014_read_view_order_indexes.ts"
import operationTraceParent from "./0015_operation_trace_parent.ts"
import anomalies from "./0016_anomalies.ts"
import entityTrajectories from "./0017_entity_trajectories.ts"
import accessTelemetry from "./0018_access_telemetry.ts"
import dreams from "./0019_dreams.ts"
import tasteDatasets from "./0020_taste_datasets.ts"
import codebases from "./0021_codebases.ts"
import memoryRepos from "./0022_memory_repos.ts"
import repoTreeAndCleanup from "./0023_repo_tree_and_cleanup.ts"
import brainChangeMarks from "./0024_brain_change_marks.ts"
import codebaseWriteCost from "./0025_codebase_write_cost.ts"
import codebaseLeanRows from "./0026_codebase_lean_rows.ts"
import codebaseEdgesWithFiles from "./0027_codebase_edges_with_files.ts"
import brainRecordsChanges from "./0028_brain_records_changes.ts"
import knowledgeBase from "./0029_knowledge_base.ts"
import auditLogsAndTemplates from "./0030_audit_logs_and_templates.ts"
import documentAndMemoryOps from "./0031_document_and_memory_ops.ts"
import hindsightFields from "./0032_hindsight_fields.ts"
import repoDirtyKeys from "./0033_repo_dirty_keys.ts"
import forgetting from "./0034_forgetting.ts"
import writePath from "./0035_write_path.ts"
import repoEnableStaging from "./0036_repo_enable_staging.ts"
import repoGc from "./0037_repo_gc.ts"
import memoryChunkIndex from "./0038_memory_chunk_index.ts"
import bankCounts from "./0039_bank_counts.ts"
import bankCountsLinksFold from "./0040_bank_counts_links_fold.ts"
import repoObjectsLockPerSchema from "./0041_repo_objects_lock_per_schema.ts"

export const migrations = {
  "0001_banks_and_operations": banksAndOperations,
  "0002_memory": memory,
  "0003_retain": retain,
  "0004_llm_requests": llmRequests,
  "0005_file_uploads": fileUploads,
  "0006_link_indexes": linkIndexes,
  "0007_webhooks": webhooks,
  "0008_directives": directives,
  "0009_mental_models": mentalModels,
  "0010_consolidation": consolidation,
  "0011_time_window_indexes": timeWindowIndexes,
  "0012_memory_unit_changes": memoryUnitChanges,
  "0013_entity_mention_recount": entityMentionRecount,
  "0014_read_view_order_indexes": readViewOrderIndexes,
  "0015_operation_trace_parent": operationTraceParent,
  "0016_anomalies": anomalies,
  "0017_entity_trajectories": entityTrajectories,
  "0018_access_telemetry": accessTelemetry,
  "0019_dreams": dreams,
  "0020_taste_datasets": tasteDatasets,
  "0021_codebases": codebases,
  "0022_memory_repos": memoryRepos,
  "0023_repo_tree_and_cleanup": repoTreeAndCleanup,
  "0024_brain_change_marks": brainChangeMarks,
  "0025_codebase_write_cost": codebaseWriteCost,
  "0026_codebase_lean_rows": codebaseLeanRows,
  "0027_codebase_edges_with_files": codebaseEdgesWithFiles,
  "0028_brain_records_changes": brainRecordsChanges,
  "0029_knowledge_base": knowledgeBase,
  "0030_audit_logs_and_templates": auditLogsAndTemplates,
  "0031_document_and_memory_ops": documentAndMemoryOps,
  "0032_hindsight_fields": hindsightFields,
  "0033_repo_dirty_keys": repoDirtyKeys,
  "0034_forgetting": forgetting,
  "0035_write_path": writePath,
  "0036_repo_enable_staging": repoEnableStaging,
  "0037_repo_gc": repoGc,
  "0038_memory_chunk_index": memoryChunkIndex,
  "0039_bank_counts": bankCounts,
  "0040_bank_counts_links_fold": bankCountsLinksFold,
  "0041_repo_objects_lock_per_schema": repoObjectsLockPerSchema
}

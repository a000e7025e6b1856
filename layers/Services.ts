/**
 * The engine of engram without any server: banks, operations, bank actors and memory over the database, with
 * the model layers (embeddings, language model) passed in. This is what an Effect program embeds to use
 * engram in-process.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { BankActors } from "../src/bank/BankActors.ts"
import { BankBrains } from "../src/brain/BankBrains.ts"
import { Foreground } from "../src/bank/Foreground.ts"
import { BankLocks } from "../src/bank/BankLocks.ts"
import { Banks } from "../src/bank/Banks.ts"
import { BankStore } from "../src/bank/BankStore.ts"
import { BankEvents } from "../src/events/BankEvents.ts"
import { Documents } from "../src/memory/Documents.ts"
import { DocumentEdits } from "../src/documents/DocumentEdits.ts"
import { DocumentTransfer } from "../src/documents/DocumentTransfer.ts"
import { StoredFiles } from "../src/files/StoredFiles.ts"
import { BankInsights } from "../src/memory/BankInsights.ts"
import { MemoryCuration } from "../src/memory/curation/MemoryCuration.ts"
import { DryRunExtract } from "../src/memory/retain/DryRunExtract.ts"
import { Entities } from "../src/memory/Entities.ts"
import { EntityIntelligence } from "../src/entities/intelligence/IntelligenceService.ts"
import { EntityTrajectories } from "../src/entities/trajectory/TrajectoryService.ts"
import { MemoryUnits } from "../src/memory/MemoryUnits.ts"
import { Anomalies } from "../src/memory/anomaly/Anomalies.ts"
import { MemoryRepos } from "../src/repos/MemoryRepos.ts"
import { FileConverter } from "../src/files/FileConverter.ts"
import { FileRetain } from "../src/memory/retain/FileRetain.ts"
import { GraphRecall } from "../src/memory/recall/GraphRecall.ts"
import { OwnerAwareBrains } from "../src/cluster/OwnerAwareBrains.ts"
import { RoutedInfluence } from "../src/cluster/RoutedInfluence.ts"
import { RoutedRecall } from "../src/cluster/RoutedRecall.ts"
import { RoutedRetain } from "../src/cluster/RoutedRetain.ts"
import { ReembeddingLive } from "../src/memory/Reembedding.ts"
import { Tags } from "../src/memory/Tags.ts"
import { Consolidation } from "../src/memory/consolidation/Consolidation.ts"
import { GraphIntelligence } from "../src/memory/GraphIntelligence.ts"
import { GraphOverview } from "../src/memory/GraphOverview.ts"
import { GraphView } from "../src/memory/GraphView.ts"
import { WebhooksLive } from "../src/webhooks/Webhooks.ts"
import type { Embeddings } from "../src/models/Embeddings.ts"
import type { Llm } from "../src/models/Llm.ts"
import { Operations } from "../src/bank/Operations.ts"
import { OperationStore } from "../src/bank/OperationStore.ts"
import { TaskRegistry } from "../src/bank/TaskRegistry.ts"
import { TableStatistics } from "../src/storage/TableStatistics.ts"
import { DatabaseHealth } from "../src/storage/DatabaseHealth.ts"
import { LlmTraceStore } from "../src/traces/LlmTraceStore.ts"
import { DatasetsLive } from "../src/datasets/DatasetsLive.ts"
import { AccessTelemetry } from "../src/activity/AccessTelemetry.ts"
import { ActivityModels } from "../src/activity/ActivityModels.ts"
import { SubRoutine } from "../src/activity/SubRoutine.ts"
import { DreamWakeups } from "../src/dreams/DreamWakeups.ts"
import { ExpiryWakeups } from "../src/memory/forgetting/ExpiryWakeups.ts"
import { ForgettingLive } from "./ForgettingLive.ts"
import { DreamsLive } from "./DreamsLive.ts"
import { BrainLive } from "./BrainLive.ts"
import { CodebasesLive } from "./CodebasesLive.ts"
import { DatabaseLive } from "./Database.ts"
import { EmbeddingIndexLive } from "./storage/EmbeddingIndex.ts"
import { ReflectionLive } from "./Reflection.ts"
import { MentalModelsLive } from "./MentalModelsLive.ts"
import { BankActorsLive } from "./cluster/ClusterLive.ts"
import { AuditLogs } from "../src/audit/AuditLogs.ts"
import { BankTemplates } from "../src/bank/BankTemplates.ts"
import { BankSettingsChanges } from "../src/bank/BankSettingsChanges.ts"

const Stores = Layer.mergeAll(
  BankStore.layer,
  OperationStore.layer,
  TaskRegistry.layer,
  BankLocks.layer,
  LlmTraceStore.layer,
  TableStatistics.layer,
  BankBrains.layer,
  BankEvents.layer,
  BankSettingsChanges.layer,
  DreamWakeups.layer,
  ExpiryWakeups.layer,
  AccessTelemetry.layer,
  DatabaseHealth.layer,
  AuditLogs.layer
).pipe(Layer.provideMerge(Foreground.layer))

const Engine = Layer.mergeAll(Banks.layer, Operations.layer).pipe(
  // In-process actors, or (SERVICE_API_CLUSTER_MODE=runner|client) actors routed through effect/cluster.
  Layer.provideMerge(BankActorsLive),
  Layer.provideMerge(Stores)
)

/** Features that read and write memories; each registers its background task types when built. */
const Graph = GraphRecall.layer

const Memory = Layer.mergeAll(
  // Synchronous retains run on the bank's owner on a cluster node (RoutedRetain wraps Retain.layer).
  FileRetain.layer.pipe(Layer.provideMerge(RoutedRetain), Layer.provideMerge(FileConverter.layerConfig)),
  // Recall answered here, or (on a cluster node that does not own the bank) on the bank's owner.
  RoutedRecall.pipe(Layer.provideMerge(MemoryUnits.layer)),
  MemoryUnits.layer,
  Documents.layer,
  // The 0.9 client's document and memory operations: edits, reprocessing, transfer archives, curation, insights.
  DocumentEdits.layer.pipe(Layer.provideMerge(RoutedRetain)),
  DocumentTransfer.layer.pipe(Layer.provideMerge(StoredFiles.layer)),
  MemoryCuration.layer.pipe(Layer.provideMerge(MemoryUnits.layer)),
  DryRunExtract.layer,
  BankInsights.layer,
  Entities.layer,
  // Trajectories first: after a retain their recompute is queued before the intelligence that reads their states.
  EntityIntelligence.layer.pipe(Layer.provideMerge(EntityTrajectories.layer)),
  Tags.layer,
  Anomalies.layer,
  Consolidation.layer,
  GraphView.layer,
  GraphOverview.layer.pipe(Layer.provideMerge(GraphIntelligence.layer)),
  WebhooksLive,
  ReembeddingLive,
  SubRoutine.layer.pipe(Layer.provideMerge(ActivityModels.layer)),
  // Influence analytics (PageRank over the brain) computed on the bank's owner on a cluster node.
  RoutedInfluence
).pipe(
  Layer.provideMerge(Graph),
  Layer.provideMerge(EmbeddingIndexLive)
)

/** Starts the actors once every handler is registered, so recovered work finds its handler. */
const WorkerStartup = Layer.effectDiscard(Effect.gen(function*() {
  const actors = yield* BankActors
  yield* actors.start
}))

export const ServicesWith = <E, R>(models: Layer.Layer<Embeddings | Llm, E, R>) =>
  WorkerStartup.pipe(
    // Memory repos copy every bank-owned table and drop the bank brains after a restore.
    Layer.provideMerge(MemoryRepos.layer),
    // Forgetting reaches every derived store (dreams, mental models, trajectories), so it sits above them all.
    Layer.provideMerge(ForgettingLive),
    // Dreams read through recall, graph intelligence and anomalies and promote into retain and mental models.
    Layer.provideMerge(DreamsLive),
    // The brain runtime writes mental models into its files and learns into memories, so it sits above both.
    Layer.provideMerge(BrainLive),
    // Dataset curation retains sets through the ordinary retain path.
    Layer.provideMerge(DatasetsLive),
    // Codebases hydrate approved chunks through the memory writer and retain.
    Layer.provideMerge(CodebasesLive),
    // Bank templates write directives and mental models (and queue their refreshes).
    Layer.provideMerge(BankTemplates.layer),
    // Mental models regenerate through reflect; research reads pages with the file converter.
    Layer.provideMerge(MentalModelsLive),
    // Reflection (reflect, directives, opinions) reads through recall, so it sits above Memory.
    Layer.provideMerge(ReflectionLive),
    Layer.provideMerge(Memory),
    // Writes made on a cluster node that does not own the bank reach the owner's brain too.
    Layer.provideMerge(OwnerAwareBrains),
    Layer.provideMerge(Engine),
    // The banks' brains hold the embedding model's vectors, so the models come before the engine.
    Layer.provideMerge(models),
    Layer.provideMerge(DatabaseLive),
    // Outbound HTTP (model providers, transcription) goes through Node's fetch.
    Layer.provideMerge(FetchHttpClient.layer)
  )

/**
 * The contract with the published Hindsight client 0.9.1: one bank is set up through the client itself, then every
 * SDK function of the client is called with valid input and must answer a 2xx the client declares, with a body
 * that passes the client's own generated type for it, field by field (`test/support/clientTypes/`). Then bad input,
 * derived from the client's request types, must answer 4xx with a JSON `detail` naming the field. Operations that
 * legitimately answer otherwise are listed with the reason; an operation neither called nor listed fails the test.
 */
import { assert, layer } from "@effect/vitest"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { Deferred, Duration, Effect } from "effect"
import { Operations } from "../../src/bank/Operations.ts"
import { LlmTraceStore } from "../../src/traces/LlmTraceStore.ts"
import { operationFinished, settled } from "../support/HttpCalls.ts"
import { badInputsFor } from "../support/clientTypes/BadInputs.ts"
import { ContractCalls } from "../support/clientTypes/ContractCalls.ts"
import { checker, sdkOperations, successTypes } from "../support/clientTypes/HindsightClientTypes.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../support/TestTasks.ts"
import { startReceiver } from "../support/WebhookReceiver.ts"

/** Operations that do not answer 2xx to valid input, each with its status and why. */
const notSuccessful: ReadonlyMap<string, { readonly status: number; readonly why: string }> = new Map([
  ["exportDocumentsSyncRemoved", {
    status: 410,
    why: "the client documents it as removed (the whole-bank synchronous export); use document-transfer/export"
  }]
])

/**
 * Types the client's answers may contain (always in optional or nullable places) that no answer here carries, so no
 * value was checked against them. Every other type reachable from a 2xx answer must have been checked at least once.
 */
const notProduced: ReadonlyMap<string, string> = new Map([
  ["TagGroupLeaf", "mental-model triggers keep no tag_groups"],
  ["TagGroupAndOutput", "mental-model triggers keep no tag_groups"],
  ["TagGroupOrOutput", "mental-model triggers keep no tag_groups"],
  ["TagGroupNotOutput", "mental-model triggers keep no tag_groups"],
  ["LabelGroupOutput", "bank templates carry no entity_labels (engram has no entity label taxonomy)"],
  ["LabelValue", "bank templates carry no entity_labels"],
  ["MapFieldOutput", "bank templates carry no entity_labels"],
  ["MentalModelDeltaOperations", "a dry-run delta refresh needs a language model (none runs in this offline test)"],
  ["LlmCallTrace", "a dry-run refresh's model calls need a language model"],
  ["ReflectDirective", "a reflect answered without a language model follows (and claims) no directive"],
  ["ReflectToolCall", "the offline reflect calls no tools"],
  ["ReflectLlmCall", "the offline reflect calls no model"]
])

/**
 * Mismatches the specification requires, each as the test reports it: where engram's specification and the client
 * name the same thing differently, the specification wins and the difference is documented.
 */
const specDivergences: ReadonlyMap<string, string> = new Map([
  [
    "getOperationStatus: $.status: string \"running\" is not one of \"pending\", \"processing\", \"completed\", \"failed\", \"cancelled\", \"not_found\"",
    "the specification names the state `running` (the client says `processing`); list filters accept `processing` as its alias"
  ]
])

/** Operations whose bodies are multipart forms: a wrong-typed JSON member cannot be sent, only a missing one. */
const multipart = new Set(["fileRetain", "importDocuments"])

const bank = "contract"
const path = (extra: Record<string, string> = {}) => ({ path: { bank_id: bank, ...extra } })

// Observations on (they are off in most tests): entity observations and observation scopes then have values to check.
const app = testApp({ operationRetryBase: Duration.millis(5), enableObservations: true }, TestTaskHandlers)

layer(app, { excludeTestServices: true })(
  "the published Hindsight client's contract",
  (it) => {
    it.effect("every operation answers valid input as the client's types declare, and bad input with 4xx and detail", () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestServer
        const receiver = yield* startReceiver()
        const calls = new ContractCalls(sdk, createClient(createConfig({ baseUrl: server.url })))
        const valid = calls.valid.bind(calls)

        // The probes and the server-wide reads.
        yield* valid("healthEndpointHealthGet")
        yield* valid("getReadiness")
        yield* valid("getLiveness")
        yield* valid("getVersion")
        yield* valid("metricsEndpointMetricsGet")
        yield* valid("getBankTemplateSchema")

        // The bank, its profile and configuration.
        yield* valid("createOrUpdateBank", {
          ...path(),
          body: { name: "Contract", mission: "Remember what Alice drinks." }
        })
        yield* valid("updateBank", { ...path(), body: { reflect_mission: "Answer briefly.", enable_reranking: false } })
        yield* valid("getBankProfile", path())
        yield* valid("updateBankDisposition", {
          ...path(),
          body: { disposition: { skepticism: 2, literalism: 3, empathy: 4 } }
        })
        yield* valid("addBankBackground", { ...path(), body: { content: "Alice lives in Lisbon." } })
        yield* valid("getBankConfig", path())
        yield* valid("updateBankConfig", { ...path(), body: { updates: { retain_chunk_size: 4000 } } })
        yield* valid("listBanks")

        // A webhook on a receiver, before the retains, so that a delivery exists to be listed.
        const webhook = yield* valid("createWebhook", {
          ...path(),
          body: { url: `${receiver.url}/hook`, event_types: ["retain.completed"], enabled: true }
        })

        // Memories: a document retained synchronously, one asynchronously, and a file.
        yield* valid("retainMemories", {
          ...path(),
          body: {
            items: [
              {
                content: "Alice prefers green tea in the morning. Alice met Bob in Lisbon in March 2024.",
                document_id: "alice-notes",
                tags: ["drinks"],
                timestamp: "2024-03-10T09:00:00Z",
                metadata: { source: "notebook" }
              },
              { content: "Bob drinks espresso after lunch with Carol.", document_id: "bob-notes", tags: ["drinks"] }
            ]
          }
        })
        const queued = yield* valid("retainMemories", {
          ...path(),
          body: {
            items: [{
              content: "Carol runs along the river on Sundays.",
              document_id: "carol-notes",
              tags: ["sport"],
              observation_scopes: [["sport"]]
            }],
            async: true
          }
        })
        const filed = yield* valid("fileRetain", {
          ...path(),
          body: {
            files: [
              new File(["# Reading\n\nDune is Alice's favourite novel.\n"], "reading.md", { type: "text/markdown" })
            ],
            request: JSON.stringify({ tags: ["books"] })
          }
        })
        for (
          const id of [queued?.operation_id, ...(filed?.operation_ids ?? [])].filter((id) => typeof id === "string")
        ) {
          yield* operationFinished(bank, id)
        }
        yield* settled(bank)

        const memories = yield* valid("listMemories", { ...path(), query: { limit: 50, tags: ["drinks"] } })
        const memoryId: string = memories.items[0].id
        yield* valid("getMemory", path({ memory_id: memoryId }))
        yield* valid("getObservationHistory", path({ memory_id: memoryId }))
        yield* valid("recallMemories", {
          ...path(),
          body: {
            query: "What does Alice drink?",
            max_tokens: 2048,
            include: { entities: {}, chunks: {} },
            trace: true
          }
        })
        yield* valid("dryRunExtractMemories", { ...path(), body: { content: "Dana plays the cello every evening." } })
        yield* valid("getAgentStats", path())
        yield* valid("getMemoriesTimeseries", { ...path(), query: { period: "30d" } })
        yield* valid("getGraph", { ...path(), query: { limit: 100 } })
        const entities = yield* valid("listEntities", { ...path(), query: { limit: 20 } })
        const entityId: string = entities.items[0].id
        yield* valid("getEntity", path({ entity_id: entityId }))
        yield* valid("regenerateEntityObservations", path({ entity_id: entityId }))
        yield* valid("getEntityGraph", { ...path(), query: { limit: 50 } })
        yield* valid("listTags", { ...path(), query: { limit: 20 } })
        yield* valid("testBankLlm", path())

        // Documents and their chunks.
        yield* valid("listDocuments", { ...path(), query: { limit: 10 } })
        yield* valid("getDocument", path({ document_id: "alice-notes" }))
        yield* valid("updateDocument", { ...path({ document_id: "alice-notes" }), body: { tags: ["drinks", "alice"] } })
        const chunks = yield* valid("listDocumentChunks", {
          ...path({ document_id: "alice-notes" }),
          query: { limit: 10 }
        })
        yield* valid("getChunk", { path: { chunk_id: chunks.items[0].chunk_id } })
        const reprocessed = yield* valid("reprocessDocument", path({ document_id: "bob-notes" }))
        yield* operationFinished(bank, reprocessed.operation_id)

        // Memory curation and observations.
        const current = yield* valid("listMemories", { ...path(), query: { limit: 50, document_id: "alice-notes" } })
        // A fact, not an observation (observations are derived and cannot be curated).
        const curated: string = current.items.find((item: any) => item.type !== "observation").id
        yield* valid("clearMemoryObservations", path({ memory_id: curated }))
        yield* valid("updateMemory", {
          ...path({ memory_id: curated }),
          body: { state: "invalidated", reason: "superseded", occurred_start: "2024-03-01T00:00:00Z" }
        })
        yield* valid("listObservationScopes", path())
        yield* valid("triggerConsolidation", { ...path(), body: {} })
        yield* valid("recoverConsolidation", path())
        yield* settled(bank)

        // Directives.
        const directive = yield* valid("createDirective", {
          ...path(),
          body: { name: "Brevity", content: "Answer in one sentence.", priority: 1, tags: ["style"] }
        })
        yield* valid("listDirectives", { ...path(), query: { limit: 10 } })
        yield* valid("getDirective", path({ directive_id: directive.id }))
        yield* valid("updateDirective", { ...path({ directive_id: directive.id }), body: { priority: 2 } })

        // Mental models.
        const model = yield* valid("createMentalModel", {
          ...path(),
          body: {
            id: "alice-drinks",
            name: "Alice's drinks",
            source_query: "What does Alice drink?",
            trigger: { keep_trace: true }
          }
        })
        yield* operationFinished(bank, model.operation_id)
        yield* valid("listMentalModels", { ...path(), query: { detail: "full" } })
        yield* valid("getMentalModel", { ...path({ mental_model_id: "alice-drinks" }), query: { detail: "full" } })
        yield* valid("updateMentalModel", { ...path({ mental_model_id: "alice-drinks" }), body: { max_tokens: 1024 } })
        const refreshed = yield* valid("refreshMentalModel", path({ mental_model_id: "alice-drinks" }))
        yield* operationFinished(bank, refreshed.operation_id)
        yield* valid("getMentalModelHistory", path({ mental_model_id: "alice-drinks" }))
        // With a mental model built, reflect shows it among what it was based on.
        yield* valid("reflect", {
          ...path(),
          body: { query: "What does Alice drink?", include: { facts: {}, tool_calls: {} } }
        })
        yield* valid("dryRunRefreshMentalModel", path({ mental_model_id: "alice-drinks" }))
        yield* valid("clearMentalModel", path({ mental_model_id: "alice-drinks" }))

        // The knowledge base.
        const folder = yield* valid("createKnowledgeFolder", { ...path(), body: { name: "Guides" } })
        const page = yield* valid("createKnowledgePage", {
          ...path(),
          body: { name: "Bob's drinks", source_query: "What does Bob drink?", parent_id: folder.id, tags: ["drinks"] }
        })
        if (typeof page.operation_id === "string") yield* operationFinished(bank, page.operation_id)
        yield* valid("getKnowledgeBaseTree", path())
        yield* valid("getKnowledgePage", path({ page_id: page.page_id }))
        yield* valid("searchKnowledgeBase", { ...path(), query: { q: "Bob", limit: 5 } })
        yield* valid("exportKnowledgeBase", path())
        yield* valid("updateKnowledgeNode", { ...path({ node_id: folder.id }), body: { name: "Handbook" } })

        // Webhooks.
        yield* eventually(Effect.sync(() => receiver.received.length), (count) => count > 0)
        yield* valid("listWebhooks", path())
        yield* valid("updateWebhook", { ...path({ webhook_id: webhook.id }), body: { enabled: false } })
        yield* valid("listWebhookDeliveries", { ...path({ webhook_id: webhook.id }), query: { limit: 10 } })

        // Templates and document transfer.
        const manifest = yield* valid("exportBankTemplate", path())
        yield* valid("importBankTemplate", { ...path(), query: { dry_run: true }, body: manifest })
        const exported = yield* valid("exportDocuments", path())
        const exportDone = yield* operationFinished(bank, exported.operation_id)
        const downloaded = yield* valid("downloadFile", {
          path: { key: exportDone.result_metadata.storage_key },
          parseAs: "arrayBuffer"
        })
        const imported = yield* valid("importDocuments", {
          path: { bank_id: "contract-copy" },
          body: { file: new Blob([downloaded as ArrayBuffer]) }
        })
        yield* operationFinished("contract-copy", imported.operation_id)

        // Operations: a task held running by the test, so that cancel and retry have something to act on.
        yield* valid("listOperations", { ...path(), query: { limit: 20 } })
        yield* valid("createOrUpdateBank", { path: { bank_id: "contract-ops" }, body: {} })
        // A retain of more items than one sub-batch holds: a parent operation with children and progress.
        const batch = yield* valid("retainMemories", {
          path: { bank_id: "contract-ops" },
          body: {
            items: Array.from({ length: 30 }, (_, i) => ({ content: `Sensor ${i} reads ${20 + (i % 5)} degrees.` })),
            async: true
          }
        })
        yield* operationFinished("contract-ops", batch.operation_id)
        yield* valid("getOperationStatus", { path: { bank_id: "contract-ops", operation_id: batch.operation_id } })
        const operations = yield* Operations
        const held = yield* operations.submit({
          bankId: "contract-ops",
          taskType: "test_block",
          payload: { key: "contract-hold" }
        })
        yield* valid("getOperationStatus", {
          path: { bank_id: "contract-ops", operation_id: held.id },
          query: { include_payload: true }
        })
        yield* valid("cancelOperation", { path: { bank_id: "contract-ops", operation_id: held.id } })
        yield* valid("retryOperation", { path: { bank_id: "contract-ops", operation_id: held.id } })
        yield* eventually(Effect.sync(() => TestTasks.blockers.get("contract-hold")), (gate) => gate !== undefined)
        yield* Deferred.succeed(TestTasks.blockers.get("contract-hold")!, undefined)
        yield* operationFinished("contract-ops", held.id)
        yield* valid("deleteOperation", { path: { bank_id: "contract-ops", operation_id: held.id } })

        // No language model runs in this offline app, so one model call is recorded where the model layer records them.
        const traces = yield* LlmTraceStore
        yield* traces.record({
          bankId: bank,
          operationId: undefined,
          purpose: "reflect",
          scope: "reflect.answer",
          provider: "openai",
          model: "m",
          status: "success",
          errorReason: undefined,
          errorMessage: undefined,
          attempt: 1,
          durationMs: 12,
          usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
          input: "question",
          output: "answer",
          createdAt: new Date()
        })

        // Audit and model-call logs (the calls above are in them).
        yield* valid("listAuditLogs", { ...path(), query: { limit: 5 } })
        yield* valid("auditLogStats", { ...path(), query: { period: "7d" } })
        yield* valid("listLlmRequests", { ...path(), query: { limit: 5 } })
        yield* valid("llmRequestStats", { ...path(), query: { period: "7d" } })

        // The removed and deprecated operations answer what the client documents.
        for (const [name, expected] of notSuccessful) {
          const answer = yield* calls.raw(name, path())
          assert.strictEqual(answer.response.status, expected.status, `${name}: ${expected.why}`)
          assert.isString((answer.error as any)?.detail, `${name} answers JSON with detail`)
        }

        // Bad input, while every id above still exists (so a refusal is about the input, not a missing resource).
        const refusals: Array<string> = []
        const refused = new Set<string>()
        for (const operation of sdkOperations) {
          const options = calls.validOptions.get(operation.name)
          if (options === undefined) continue
          for (
            const bad of badInputsFor(operation, options as Record<string, unknown>, multipart.has(operation.name))
          ) {
            refused.add(operation.name)
            const answer = yield* calls.raw(operation.name, bad.options)
            const status = answer.response.status
            const error = answer.error as { detail?: unknown } | undefined
            const named = JSON.stringify(error ?? "").includes(bad.field)
            if (status < 400 || status >= 500 || status === 404 || typeof error?.detail !== "string" || !named) {
              refusals.push(
                `${operation.name} (${bad.label}): ${status} ${
                  JSON.stringify(answer.error ?? answer.data).slice(0, 200)
                }`
              )
            }
          }
        }

        // The client's types give 23 operations a body and one (searchKnowledgeBase) a required query.
        assert.strictEqual(refused.size, 24, [...refused].join(", "))
        // Last, what removes things.
        yield* valid("deleteWebhook", path({ webhook_id: webhook.id }))
        yield* valid("deleteKnowledgeNode", path({ node_id: folder.id }))
        yield* valid("deleteMentalModel", path({ mental_model_id: "alice-drinks" }))
        yield* valid("deleteDirective", path({ directive_id: directive.id }))
        yield* valid("deleteDocument", path({ document_id: "carol-notes" }))
        yield* valid("resetBankConfig", path())
        yield* valid("clearObservations", path())
        yield* valid("clearBankMemories", { ...path(), query: { type: "experience" } })
        yield* valid("deleteBank", { path: { bank_id: "contract-copy" } })

        const unexercised = new Map<string, Array<string>>()
        for (const operation of sdkOperations) {
          for (const type of successTypes(operation).values()) {
            for (const name of checker.reachable(type)) {
              if (!checker.visited.has(name)) unexercised.set(name, [...(unexercised.get(name) ?? []), operation.name])
            }
          }
        }

        // One report of everything found, so that a run shows all mismatches at once.
        assert.deepStrictEqual(
          {
            mismatches: calls.failures.filter((mismatch) => !specDivergences.has(mismatch)),
            uncalled: calls.uncalled(new Set(notSuccessful.keys())),
            refusals,
            unexercised: [...unexercised.keys()].filter((name) => !notProduced.has(name)).sort()
          },
          { mismatches: [], uncalled: [], refusals: [], unexercised: [] }
        )
        assert.strictEqual(calls.checked.size + notSuccessful.size, sdkOperations.length)
      })))
  }
)

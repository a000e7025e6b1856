/**
 * An expired memory is gone from every read at its instant of expiry, not only from recall and the memory list:
 * over the real HTTP server on both tiers, the graph views, the state surface (whose answers are cached), the tag
 * and document counts, the entity co-occurrence graph, an entity's trajectory, a dataset export (of a set retained
 * into the bank), the MCP tools, and the document and chunk it came from (their text is the memory's) stop returning it
 * before any sweep ran; a `.brain` export deletes what has expired before it writes the file. A document archive
 * carries each fact's expiry, so an imported copy is forgotten at the same instant as the original.
 */
import { assert, layer } from "@effect/vitest"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { decodeArchive, encodeArchive } from "../../../src/documents/TransferArchive.ts"
import { pathOf, personWithTrajectory } from "../../support/EntityTrajectory.ts"
import { bankPath, call, ok, operationFinished, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { stateSurfaceViews } from "../../support/StateSurfaceViews.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "expiry-reads"
const base = bankPath(bank)
const secret = "Zephyrine Okafor keeps the spare office key under the blue flowerpot."
const lasting = "Marguerite Delacroix waters the office plants every Monday."

/**
 * Every read other than recall and the memory list that shows memories, as text, keyed by what was read; the reads of
 * the expiring memory's own document and chunk with their status.
 */
const reads = (datasetId: string, chunkId: string) =>
  Effect.gen(function*() {
    const texts = yield* stateSurfaceViews(bank, ["Where is the spare office key?"])
    for (const view of ["graph?limit=100", "timeline?limit=100", "tags", "documents", "entities/graph?min_count=1"]) {
      texts[view] = (yield* ok("GET", `${base}/${view}`)).text
    }
    const statuses: Record<string, number> = {}
    for (
      const path of [`${base}/documents/key-note`, `${base}/documents/key-note/chunks`, `/v1/default/chunks/${chunkId}`]
    ) {
      const response = yield* call("GET", path)
      texts[path] = response.text
      statuses[path] = response.status
    }
    const server = yield* TestServer
    const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
    texts["dataset export"] = (yield* ok("POST", `${base}/forge/taste/export`, { dataset_id: datasetId })).text
    texts["mcp export_dataset"] = JSON.stringify(yield* mcp.ok("export_dataset", { dataset_id: datasetId }))
    return { texts, statuses }
  })

const tagCount = (texts: Record<string, string>, tag: string) =>
  (JSON.parse(texts["tags"]!).items as Array<{ tag: string; count: number }>).find((item) => item.tag === tag)?.count

const documentCount = (texts: Record<string, string>, documentId: string) =>
  (JSON.parse(texts["documents"]!).items as Array<{ document_id: string; memory_unit_count: number }>)
    .find((item) => item.document_id === documentId)?.memory_unit_count

const memoryIdOf = (text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} AND text = ${text}`
      .pipe(Effect.orDie)
    assert.isDefined(row, `"${text}" was retained as one memory`)
    return row!.id
  })

layer(testApp({ mcpToolFamilies: ["graph", "datasets"] }), { excludeTestServices: true, timeout: "3 minutes" })(
  "expiry reaches every read",
  (it) => {
    it.effect("at its expiry a memory leaves the graph views, the cached state surface, the counts and a trajectory", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const alice = yield* personWithTrajectory(bank, "Alice")
        yield* ok("POST", `${base}/memories`, {
          items: [
            { content: secret, tags: ["office"], document_id: "key-note" },
            { content: lasting, tags: ["office"], document_id: "plants-note" }
          ]
        })
        // A dataset set retained into the bank: it goes with the memory it became.
        const dataset = (yield* ok("POST", `${base}/forge/taste/datasets`, { name: "office", schema_type: "qa_pair" }))
          .body.id
        const sets = (yield* ok("POST", `${base}/forge/taste/datasets/${dataset}/sets`, {
          sets: [
            { question: "Where does Zephyrine Okafor keep the key?", answer: "Zephyrine Okafor: under the flowerpot." },
            { question: "Who waters the plants?", answer: "Marguerite Delacroix waters the office plants." }
          ]
        })).body.sets as Array<{ id: string }>
        const fromSet = (yield* ok("POST", `${base}/forge/taste/retain`, { set_ids: [sets[0]!.id] })).body
          .memory_unit_ids as Array<string>
        assert.isNotEmpty(fromSet)
        yield* settled(bank)
        const secretId = yield* memoryIdOf(secret)
        const [held] = yield* sql<{ chunkId: string }>`SELECT chunk_id FROM memory_units WHERE id = ${secretId}`
        const chunkId = held!.chunkId
        const lastStep = alice.before.at(-1)!

        // The sweep is held off (an open sweep row, as if another runner were sweeping), so what is checked below is
        // the reads' own rule, against rows still stored.
        const holdSweep = crypto.randomUUID()
        yield* sql`INSERT INTO operations (id, bank_id, task_type, status, payload)
        VALUES (${holdSweep}, ${bank}, 'expiry_sweep', 'running', '{}')`
        // A real expiry a few seconds ahead, set through the API: the state surface builds and caches its answers
        // before it, and the clock, not a write, moves past it.
        const expiresAt = Date.now() + 6_000
        for (const id of [secretId, lastStep, ...fromSet]) {
          yield* ok("PATCH", `${base}/memories/${id}`, { expires_at: new Date(expiresAt).toISOString() })
        }
        const { texts: before, statuses: statusesBefore } = yield* reads(dataset, chunkId)
        assert.isBelow(Date.now(), expiresAt, "the reads before the expiry finished before it (a slow machine?)")
        for (
          const view of [
            "graph?limit=100",
            "graph/intelligence?window_days=0&confidence_min=0&limit=100",
            "dataset export",
            ...Object.keys(statusesBefore)
          ]
        ) {
          assert.include(before[view], "Zephyrine", `${view} shows the memory before its expiry`)
        }
        assert.strictEqual(tagCount(before, "office"), 2)
        assert.strictEqual(documentCount(before, "key-note"), 1)
        assert.include(yield* pathOf(bank, alice.entity), lastStep)

        yield* Effect.sleep(Math.max(0, expiresAt - Date.now()) + 100)
        const { texts: after, statuses } = yield* reads(dataset, chunkId)
        for (const [path, status] of Object.entries(statuses)) {
          assert.strictEqual(status, 404, `${path}: ${after[path]}`)
        }
        for (const [view, text] of Object.entries(after)) {
          for (const word of ["Zephyrine", "flowerpot", secretId]) {
            const at = text.indexOf(word)
            assert.strictEqual(
              at,
              -1,
              `${view} still returns "${word}": ${text.slice(Math.max(0, at - 200), at + 100)}`
            )
          }
        }
        assert.include(after["graph?limit=100"], "Marguerite", "the lasting memory is still shown")
        assert.include(after["dataset export"], "Marguerite", "the set never retained is still exported")
        assert.strictEqual(tagCount(after, "office"), 1)
        assert.isUndefined(documentCount(after, "key-note"), "the expired memory's document is still listed")
        assert.strictEqual(documentCount(after, "plants-note"), 1)
        const path = yield* pathOf(bank, alice.entity)
        assert.notInclude(path, lastStep, "the trajectory no longer shows the expired fact")
        assert.sameMembers(path, alice.before.slice(0, -1))
        // Nothing was swept: the rows are still stored, and every read hid them regardless.
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
        WHERE id IN ${sql.in([secretId, lastStep, ...fromSet])}`
        assert.strictEqual(stored[0]!.n, 2 + fromSet.length)
        yield* sql`DELETE FROM operations WHERE id = ${holdSweep}`
      }))

    it.effect("a .brain export taken after the expiry, before any sweep, does not carry the memory", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const server = yield* TestServer
        const exportBank = "expiry-brain-export"
        const exportPath = bankPath(exportBank)
        const exported = () =>
          Effect.promise(async () => {
            const response = await fetch(`${server.url}${exportPath}/brain/export`)
            assert.strictEqual(response.status, 200)
            return Buffer.from(await response.arrayBuffer())
          })
        yield* ok("POST", `${exportPath}/memories`, { items: [{ content: secret }, { content: lasting }] })
        yield* settled(exportBank)
        const [row] = yield* sql<{ id: string }>`SELECT id FROM memory_units
        WHERE bank_id = ${exportBank} AND text = ${secret}`.pipe(Effect.orDie)
        assert.isDefined(row)
        // The brain holds the record (a recall loads it), and the file carries the text while it is live.
        yield* ok("POST", `${exportPath}/memories/recall`, { query: "Where is the spare office key?" })
        assert.isTrue((yield* exported()).includes("flowerpot"), "the file carries a live memory's text")

        // The scheduled sweep is held off, as above: only the export can have removed it.
        const holdSweep = crypto.randomUUID()
        yield* sql`INSERT INTO operations (id, bank_id, task_type, status, payload)
        VALUES (${holdSweep}, ${exportBank}, 'expiry_sweep', 'running', '{}')`
        const expiresAt = Date.now() + 1_000
        yield* ok("PATCH", `${exportPath}/memories/${row!.id}`, { expires_at: new Date(expiresAt).toISOString() })
        yield* Effect.sleep(Math.max(0, expiresAt - Date.now()) + 100)

        const file = yield* exported()
        for (const word of ["Zephyrine", "flowerpot", row!.id]) {
          assert.isFalse(file.includes(word), `the exported file still carries "${word}"`)
        }
        assert.isTrue(file.includes("Marguerite"), "the lasting memory is still exported")
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${row!.id}`
        assert.strictEqual(stored[0]!.n, 0, "the export deleted the expired memory, as the sweep would have")
        const audited = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_logs
        WHERE bank_id = ${exportBank} AND action = 'memories.expiry_sweep'`
        assert.strictEqual(audited[0]!.n, 1, "the deletion is audited as a sweep's")
        yield* sql`DELETE FROM operations WHERE id = ${holdSweep}`
      }))

    it.effect("a document archive carries each fact's expiry into the bank that imports it, and nothing expired", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const raw = createClient(createConfig({ baseUrl: server.url }))
        const source = "expiry-archive-source"
        const target = "expiry-archive-target"
        const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
        yield* ok("POST", `${bankPath(source)}/memories`, {
          items: [
            {
              content: "The visitor badge for the lab expires with this memory.",
              document_id: "badge",
              expires_at: expiresAt
            },
            { content: "The lab's fire exit is behind the freezer room.", document_id: "exit" },
            {
              content: "The old alarm code of the lab was 4417.",
              document_id: "old-code",
              expires_at: new Date(Date.now() + 2_000).toISOString()
            }
          ]
        })
        yield* settled(source)
        // The sweep is held off, so the document of the expired memory is still stored when the export reads.
        yield* sql`INSERT INTO operations (id, bank_id, task_type, status, payload)
          VALUES (${crypto.randomUUID()}, ${source}, 'expiry_sweep', 'running', '{}')`
        yield* Effect.sleep("2100 millis")
        const exported = yield* ok("POST", `${bankPath(source)}/document-transfer/export`)
        const done = yield* operationFinished(source, exported.body.operation_id)
        assert.strictEqual(done.status, "completed", JSON.stringify(done))
        const downloaded = yield* Effect.promise(() =>
          sdk.downloadFile({ client: raw, path: { key: done.result_metadata.storage_key }, parseAs: "arrayBuffer" })
        )
        const archive = yield* decodeArchive(new Uint8Array(downloaded.data as ArrayBuffer))
        assert.sameMembers(archive.documents.map((document) => document.document_id), ["badge", "exit"])
        assert.notInclude(JSON.stringify(archive), "4417", "the archive carries an expired memory's text")
        const imported = yield* Effect.promise(() =>
          sdk.importDocuments({
            client: raw,
            path: { bank_id: target },
            body: { file: new Blob([downloaded.data as ArrayBuffer]) }
          })
        )
        assert.strictEqual(imported.response.status, 202, JSON.stringify(imported.error))
        const importDone = yield* operationFinished(target, imported.data!.operation_id)
        assert.strictEqual(importDone.status, "completed", JSON.stringify(importDone))
        const listed = (yield* ok("GET", `${bankPath(target)}/memories/list?limit=100`)).body.items as Array<any>
        const expiryOf = (document: string) => listed.find((item) => item.document_id === document)?.expires_at
        assert.isDefined(listed.find((item) => item.document_id === "badge"), JSON.stringify(listed))
        assert.strictEqual(Date.parse(expiryOf("badge")), Date.parse(expiresAt))
        assert.isUndefined(expiryOf("exit"), "a fact without an expiry imports without one")
      }))

    it.effect("an archive whose expiry is not a date is refused, naming the entry and the field", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const raw = createClient(createConfig({ baseUrl: server.url }))
        const target = "expiry-archive-refused"
        const fact = {
          text: "A fact whose expiry was mangled.",
          fact_type: "world",
          context: null,
          occurred_start: null,
          occurred_end: null,
          mentioned_at: null,
          metadata: {},
          tags: [],
          expires_at: "next week",
          chunk_index: null,
          entities: []
        }
        const archive = encodeArchive({
          bankId: "elsewhere",
          exportedAt: new Date().toISOString(),
          documents: [{
            document_id: "mangled",
            metadata: {},
            tags: [],
            context: null,
            original_text: null,
            created_at: null,
            chunks: [],
            facts: [fact as any],
            causal_links: []
          }],
          observations: null
        })
        const refused = yield* Effect.promise(() =>
          sdk.importDocuments({ client: raw, path: { bank_id: target }, body: { file: new Blob([archive]) } })
        )
        assert.strictEqual(refused.response.status, 400, JSON.stringify(refused.error))
        const said = JSON.stringify(refused.error)
        assert.include(said, "documents/000001.json")
        assert.include(said, "expires_at")
        assert.strictEqual(
          (yield* call("GET", `${bankPath(target)}/memories/list?limit=1`)).status,
          404,
          "nothing stored"
        )
      }))
  }
)

/**
 * The two banks of a fuzz run. The *target* bank is what fuzzed requests address: a request that turns out valid
 * may change it, and a valid DELETE may remove it, so it is re-seeded when it is gone. The *sentinel* bank is seeded
 * the same way and never addressed — except through ids that must not reach it (its own memory ids under the target
 * bank, near-miss bank ids) — and its snapshot must stay identical for the whole run.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestServer } from "../TestServer.ts"
import type { Finding } from "./FuzzRun.ts"
import { eventually } from "../TestTasks.ts"

const bankPath = (bankId: string) => `/v1/default/banks/${bankId}`

const settledStatuses = new Set(["completed", "failed", "cancelled"])

/** Waits until the bank has no pending or running operation (mental model refreshes run in the background). */
export const settle = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    yield* eventually(
      server.request("GET", `${bankPath(bankId)}/operations?limit=100`),
      (response) =>
        response.status !== 200 ||
        (response.body.operations as Array<any>).every((operation) => settledStatuses.has(operation.status))
    )
  })

/** A bank with a document, tagged memories (and so entities and chunks), a directive, a mental model and a webhook. */
export const seedBank = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const ok = (method: string, path: string, json: unknown) =>
      Effect.map(server.request(method, `${bankPath(bankId)}${path}`, { json }), (response) => {
        assert.isBelow(response.status, 300, `seeding ${method} ${path}: ${response.text}`)
        return response.body
      })
    yield* ok("PUT", "", { name: `Fuzz ${bankId}`, reflect_mission: "Keep notes about the team." })
    yield* ok("POST", "/memories", {
      items: [
        {
          content: "Priya moved to Lisbon in March 2024 and now works as a cartographer.",
          document_id: "priya-notes",
          context: "team notes",
          tags: ["team:maps"],
          metadata: { source: "fuzz" },
          timestamp: "2024-04-02T10:00:00Z"
        },
        { content: "Tomás prefers green tea to coffee and runs the Friday book club.", tags: ["team:tea"] }
      ]
    })
    yield* ok("POST", "/directives", {
      name: "Cite",
      content: "Say which memory a claim comes from.",
      tags: ["team:maps"]
    })
    yield* ok("POST", "/mental-models", { name: "Team", source_query: "What does the team prefer?" })
    // Port 9 (discard) on loopback: deliveries fail without reaching anything.
    yield* ok("POST", "/webhooks", { url: "http://127.0.0.1:9/hook", event_types: ["operation.failed"] })
    const dataset = yield* ok("POST", "/forge/taste/datasets", {
      name: "Fuzz trivia",
      schema_type: "qa_pair",
      taste_tags: ["fuzz"]
    })
    yield* ok("POST", `/forge/taste/datasets/${dataset.id}/sets`, {
      sets: [{ question: "Where does Priya live?", answer: "Lisbon." }, {
        question: "What does Tomás drink?",
        answer: "Green tea."
      }]
    })
    yield* settle(bankId)
  })

/** Re-seeds the target bank when a valid fuzzed DELETE removed it or cleared its memories. */
export const ensureSeeded = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const listed = yield* server.request("GET", `${bankPath(bankId)}/memories/list?limit=1`)
    if (listed.status !== 200 || listed.body.total === 0) yield* seedBank(bankId)
  })

const idsOf = (body: any, key = "items", field = "id"): Array<string> =>
  Array.isArray(body?.[key])
    ? body[key].map((item: any) => item[field]).filter((id: unknown) => typeof id === "string")
    : []

/** Ids of the bank's records by the path parameter (or tool argument) name that addresses them. */
export const idPools = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const get = (path: string) => Effect.map(server.request("GET", `${bankPath(bankId)}${path}`), (r) => r.body)
    const memories = yield* get("/memories/list?limit=50")
    const pools: Record<string, Array<string>> = {
      memory_id: idsOf(memories),
      chunk_id: idsOf(memories, "items", "chunk_id"),
      document_id: idsOf(yield* get("/documents"), "items", "document_id"),
      directive_id: idsOf(yield* get("/directives?active_only=false")),
      mental_model_id: idsOf(yield* get("/mental-models")),
      webhook_id: idsOf(yield* get("/webhooks")),
      entity_id: idsOf(yield* get("/entities")),
      operation_id: idsOf(yield* get("/operations?limit=20"), "operations")
    }
    pools["dataset_id"] = idsOf(yield* get("/forge/taste/datasets"), "datasets")
    pools["set_id"] = (yield* Effect.forEach(pools["dataset_id"].slice(0, 2), (id) =>
      get(`/forge/taste/datasets/${id}/sets`)))
      .flatMap((body) => idsOf(body, "sets"))
    const anomalies = yield* server.request("POST", `${bankPath(bankId)}/anomaly/intelligence`, { json: {} })
    pools["event_id"] = idsOf(anomalies.body, "events")
    return pools
  })

/**
 * Everything a user could read about a bank: profile, config, stats, memories, documents, directives (inactive
 * too), mental models, webhooks, entities, tags, datasets, its memory repo and its dream runs. Equal snapshots
 * mean the bank's data did not change.
 */
export const snapshot = (bankId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const reads = [
      "/profile",
      "/config",
      "/stats",
      "/memories/list?limit=200",
      "/documents?limit=200",
      "/directives?active_only=false&limit=200",
      "/mental-models",
      "/webhooks",
      "/entities?limit=200",
      "/tags?limit=200",
      "/forge/taste/datasets",
      "/repo",
      "/dreams"
    ]
    const bodies = yield* Effect.forEach(reads, (path) =>
      Effect.map(server.request("GET", `${bankPath(bankId)}${path}`), (response) =>
        [path, {
          status: response.status,
          body: response.body
        }] as const))
    return Object.fromEntries(bodies) as Record<string, { status: number; body: unknown }>
  })

/** The reads whose answers differ between two snapshots. */
export const changedReads = (before: Record<string, unknown>, after: Record<string, unknown>) =>
  Object.keys(before).filter((path) => JSON.stringify(before[path]) !== JSON.stringify(after[path]))

/**
 * One SQL read of everything stored for some banks: per bank, a digest of its rows in each table with a column
 * naming a bank (`bank_id`, `root_bank_id`, `workspace_bank_id`, …; listed from the schema, so a new table is
 * covered without touching this file) and of the entity links of its memories, which name none. Equal digests mean
 * no stored row of the bank changed. Answers, per bank, the digest of each table by name.
 */
const storedDigests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* Effect.orDie(sql<{ readonly tableName: string; readonly columnName: string }>`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.column_name LIKE '%bank\\_id'
    ORDER BY c.table_name, c.column_name`)
  const digest = "md5(coalesce(string_agg(r::text, chr(30) ORDER BY r::text), ''))"
  const query = [
    ...columns.map(({ columnName, tableName }) =>
      `SELECT r."${columnName}" AS bank, '${tableName}.${columnName}' AS name, ${digest} AS digest ` +
      `FROM "${tableName}" r WHERE r."${columnName}" = ANY($1) GROUP BY 1`
    ),
    `SELECT u.bank_id AS bank, 'unit_entities' AS name, ${digest} AS digest ` +
    `FROM unit_entities r JOIN memory_units u ON u.id = r.unit_id WHERE u.bank_id = ANY($1) GROUP BY 1`
  ].join("\nUNION ALL\n")
  return (bankIds: ReadonlyArray<string>) =>
    Effect.map(
      Effect.orDie(
        sql.unsafe<{ readonly bank: string; readonly name: string; readonly digest: string }>(query, [bankIds])
      ),
      (rows) =>
        Object.fromEntries(bankIds.map((bankId) => [
          bankId,
          Object.fromEntries(rows.filter((row) => row.bank === bankId).map((row) => [row.name, row.digest]))
        ])) as Record<string, Record<string, string>>
    )
})

/** The tables whose digests differ (a table where the bank has no rows has none). */
const changedTables = (before: Record<string, string>, after: Record<string, string>) =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((table) => before[table] !== after[table])

/** The audit log: a row for every request, which no id pool reads. */
const requestLog = "audit_logs.bank_id"

/**
 * The two banks through a fuzz run. `pools` answers the ids for the next fuzz target (`fuzzPools` of the target's
 * `idPools`, re-seeding the target first if a valid DELETE removed it), read afresh when a stored row of the target
 * changed since they were last read, the same pools otherwise (the reads would answer the same ids). `afterEach`,
 * run after each fuzz target, reports the server's health and, when a stored row of the sentinel changed, any
 * change to what a user reads about it (`snapshot`; a change is reported once, then becomes the new baseline).
 * `atEnd` compares what a user reads once more, whatever the rows say (a change held only in memory shows there).
 * One SQL read per fuzz target serves both banks.
 */
export const watchBanks = (target: string, sentinel: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const digestsOf = yield* storedDigests
    const sentinelIds = yield* idPools(sentinel)
    assert.isAbove(sentinelIds["memory_id"]!.length, 0, "the sentinel has memories")
    let seen = yield* snapshot(sentinel)
    let digests = yield* digestsOf([target, sentinel])
    let read: { readonly digest: Record<string, string>; readonly pools: ReturnType<typeof fuzzPools> } | undefined

    const pools = Effect.gen(function*() {
      const digest = digests[target]!
      if (read !== undefined && changedTables(read.digest, digest).every((table) => table === requestLog)) {
        return read.pools
      }
      yield* ensureSeeded(target)
      read = { digest, pools: fuzzPools(target, yield* idPools(target), sentinelIds) }
      return read.pools
    })

    const compare = (name: string, storedChanged: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const now = yield* snapshot(sentinel)
        const changed = changedReads(seen, now)
        if (changed.length === 0) return []
        seen = now
        const rows = storedChanged.length === 0 ? "" : `; stored rows changed in ${storedChanged.join(", ")}`
        return [{ target: name, problem: `the sentinel bank changed: ${changed.join(", ")}${rows}` }]
      })

    const afterEach = (name: string) =>
      Effect.gen(function*() {
        const findings: Array<Finding> = []
        const health = yield* server.request("GET", "/health")
        if (health.status !== 200) {
          findings.push({ target: name, problem: `/health answered ${health.status} afterwards` })
        }
        const now = yield* digestsOf([target, sentinel])
        const storedChanged = changedTables(digests[sentinel]!, now[sentinel]!)
        digests = now
        if (storedChanged.length > 0) {
          findings.push(...yield* compare(name, storedChanged))
        }
        return findings
      })

    return { sentinelIds, pools, afterEach, atEnd: compare("the end of the run", []) }
  })

/**
 * The ids fuzzed requests use: the target's records with two of the sentinel's mixed in (addressing those under
 * the target bank must not reach them); the only bank id is the target's.
 */
export const fuzzPools = (
  targetBank: string,
  own: Record<string, Array<string>>,
  foreign: Record<string, Array<string>>
) => ({
  ...Object.fromEntries(
    Object.entries(own).map(([name, ids]) => [name, [...ids, ...(foreign[name] ?? []).slice(0, 2)]])
  ),
  bank_id: [targetBank]
})

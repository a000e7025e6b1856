/**
 * A bank holding one memory with every kind of derived state citing it, and the check that all of it is gone: shared
 * by the tests of the paths that delete with everything derived (the sweeps, a delete by id, a clear, a document
 * delete). The memory's access events come from real recalls, the document and chunk from a real retain, the model
 * from a real refresh and the kept file from a real export; dream runs, predictions, anomalies and dataset sets that
 * cite it are stored the way those features store them (their generators do not pick a given memory).
 */
import { assert } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { BrainRuntime } from "../../src/brain/BrainRuntime.ts"
import { bankPath, call, ok, settled } from "./HttpCalls.ts"
import { TestServer } from "./TestServer.ts"
import { eventually } from "./TestTasks.ts"

export const lasting = "Marguerite waters the office plants every Monday."

/** A bank holding one memory with every kind of derived state citing it; answers the memory's id. */
export const withDerived = (bank: string, secret: string, extra: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const base = bankPath(bank)
    yield* ok("POST", `${base}/memories`, {
      items: [{ content: secret, document_id: `${bank}-doc`, ...extra }, { content: lasting }]
    })
    yield* settled(bank)
    const listed = (yield* ok("GET", `${base}/memories/list?limit=100`)).body.items as Array<any>
    const id = listed.find((item) => item.text.includes("flowerpot")).id as string
    yield* ok("POST", `${base}/mental-models`, {
      id: "keys",
      name: "Keys",
      source_query: "Where is the spare office key?"
    })
    yield* settled(bank)
    yield* eventually(
      Effect.map(ok("GET", `${base}/mental-models/keys`), (r) => r.text),
      (text) => text.includes(id),
      Duration.seconds(30)
    )
    // Reads leave access events (flushed in the background).
    yield* ok("POST", `${base}/memories/recall`, { query: "Where is the spare office key?" })
    yield* eventually(
      sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = ${bank} AND item_id = ${id}`.pipe(
        Effect.orDie
      ),
      (rows) => rows[0]!.n > 0,
      Duration.seconds(30)
    )
    const run = crypto.randomUUID()
    yield* sql`INSERT INTO dream_runs (id, bank_id, status, run_type, trigger_source, generator, maturity_tier, created_at, summary, evidence_ids)
      VALUES (${run}, ${bank}, 'success', 'dream', 'manual', 'deterministic', 'seed', now(), 'the key under the flowerpot', ARRAY[${id}]::text[])`
    yield* sql`INSERT INTO dream_predictions (id, bank_id, run_id, title, description, target_kind, horizon, confidence,
        expiration_window_days, expires_at, status, created_at, supporting_evidence_ids)
      VALUES (${crypto.randomUUID()}, ${bank}, ${run}, 'Key moves', 'the key will move', 'memory', 'week', 0.5, 7,
        now() + interval '7 days', 'pending', now(), ARRAY[${id}]::text[])`
    yield* sql`INSERT INTO anomaly_events (id, bank_id, anomaly_type, severity, status, description, detected_at, unit_ids)
      VALUES (${crypto.randomUUID()}, ${bank}, 'contradiction', 0.5, 'open', 'two places for the key', now(), ARRAY[${id}]::text[])`
    const dataset = crypto.randomUUID()
    yield* sql`INSERT INTO taste_datasets (id, bank_id, name, schema_type) VALUES (${dataset}, ${bank}, 'keys', 'qa_pair')`
    yield* sql`INSERT INTO taste_sets (id, bank_id, dataset_id, set_key, source_payload, working_payload, status, memory_unit_ids)
      VALUES (${crypto.randomUUID()}, ${bank}, ${dataset}, 'k1', '{}'::jsonb, '{}'::jsonb, 'retained', ARRAY[${id}]::text[])`
    // The kept `.brain` file, written with the memory's text in it.
    const server = yield* TestServer
    yield* Effect.promise(() => fetch(`${server.url}${base}/brain/export?mode=full_copy`).then((r) => r.arrayBuffer()))
    const runtime = yield* BrainRuntime
    assert.include(
      readFileSync(runtime.filePath(bank)).toString("latin1"),
      "flowerpot",
      "the kept file holds the memory"
    )
    return id
  })

/** Every derived kind, checked gone; the other memory stays (unless `lastingGone`: a clear took it too). */
export const assertNothingLeft = (bank: string, id: string, options: { readonly lastingGone?: boolean } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const base = bankPath(bank)
    const count = (rows: ReadonlyArray<{ n: number }>) => rows[0]!.n
    const left = {
      memory: count(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${id}`),
      dream_runs: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM dream_runs WHERE bank_id = ${bank} AND ${id} = ANY(evidence_ids)`
      ),
      dream_predictions: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM dream_predictions WHERE bank_id = ${bank} AND ${id} = ANY(supporting_evidence_ids)`
      ),
      anomalies: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM anomaly_events WHERE bank_id = ${bank} AND ${id} = ANY(unit_ids)`
      ),
      dataset_sets: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM taste_sets WHERE bank_id = ${bank} AND ${id} = ANY(memory_unit_ids)`
      ),
      access_events: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = ${bank} AND item_id = ${id}`
      ),
      chunks: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM chunks WHERE bank_id = ${bank} AND text ILIKE '%flowerpot%'`
      ),
      documents: count(
        yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM documents WHERE bank_id = ${bank} AND document_id = ${`${bank}-doc`}`
      )
    }
    assert.deepStrictEqual(left, {
      memory: 0,
      dream_runs: 0,
      dream_predictions: 0,
      anomalies: 0,
      dataset_sets: 0,
      access_events: 0,
      chunks: 0,
      documents: 0
    })
    assert.notInclude(
      (yield* ok("GET", `${base}/mental-models/keys`)).text,
      id,
      "the model citing it was emptied (and refreshed)"
    )
    assert.notInclude((yield* ok("GET", `${base}/dreams`)).text, "flowerpot")
    assert.strictEqual((yield* call("GET", `${base}/documents/${bank}-doc`)).status, 404)
    const runtime = yield* BrainRuntime
    const kept = yield* Effect.sync(() => {
      try {
        return readFileSync(runtime.filePath(bank)).toString("latin1")
      } catch {
        return "" // removed: rebuilt later, and holding nothing meanwhile
      }
    })
    assert.notInclude(kept, "flowerpot", "the kept .brain file was written again without it")
    if (options.lastingGone !== true) {
      assert.include((yield* ok("GET", `${base}/memories/list?limit=100`)).text, lasting)
    }
  })

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
import { GraphRecall } from "../../src/memory/recall/GraphRecall.ts"
import { bankPath, call, ok, settled } from "./HttpCalls.ts"
import { TestServer } from "./TestServer.ts"
import { eventually } from "./TestTasks.ts"

export const lasting = "Marguerite waters the office plants every Monday."

/** How many facts (world, experience, opinion) the bank holds, read from the table. */
export const factCount = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
      WHERE bank_id = ${bank} AND fact_type IN ('world', 'experience', 'opinion')`.pipe(Effect.orDie)
    return rows[0]!.n
  })

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

const opinion = "Hiding the spare office key under a flowerpot is a careless habit."
const opinionOfOpinion = "Careless key habits like the flowerpot one deserve a reminder."
const question = "What about the spare office key under the flowerpot?"

/**
 * Two opinions, the way reflect stores them (`source_fact_ids`: what the answer cited): one resting on the memory,
 * one resting on that opinion. Each copies the memory's row (its embedding, so recall finds it) under a new id and
 * `seq`, and the brain is told, as the opinion writer tells it.
 */
export const withOpinions = (bank: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const first = crypto.randomUUID()
    const second = crypto.randomUUID()
    for (const [newId, text, source] of [[first, opinion, id], [second, opinionOfOpinion, first]] as const) {
      yield* sql`INSERT INTO memory_units
        SELECT r.* FROM memory_units u, LATERAL jsonb_populate_record(null::memory_units, to_jsonb(u) || jsonb_build_object(
          'id', ${newId}::text, 'seq', nextval(pg_get_serial_sequence('memory_units', 'seq')), 'fact_type', 'opinion',
          'text', ${text}::text, 'content_hash', ${newId}::text, 'source_fact_ids', jsonb_build_array(${source}::text),
          'document_id', null, 'chunk_id', null, 'confidence', 0.7)) r
        WHERE u.id = ${id}`
    }
    // A write tells the brain, as the opinion writer does.
    yield* (yield* GraphRecall).changed(bank)
    const recalled = yield* reads(bank)
    assert.include(recalled, "careless habit", "recall returns the opinion before the delete")
    assert.include(recalled, "deserve a reminder", "and the opinion resting on it")
    return [first, second]
  })

/** What recall (opinions asked for) and an offline reflect answer to the question, as one text. */
export const reads = (bank: string) =>
  Effect.gen(function*() {
    const base = bankPath(bank)
    const recall = yield* ok("POST", `${base}/memories/recall`, {
      query: question,
      budget: "high",
      types: ["world", "experience", "opinion"]
    })
    const reflect = yield* ok("POST", `${base}/reflect`, { query: question, include: { facts: {} } })
    return recall.text + reflect.text
  })

export const assertOpinionsGone = (bank: string, opinions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const left = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE id IN ${sql.in([...opinions])}`
    assert.deepStrictEqual(left, [], "the opinions resting on the memory (and on that opinion) are deleted")
    const after = yield* reads(bank)
    assert.notInclude(after, "careless habit", "neither recall nor reflect returns the opinion")
    assert.notInclude(after, "deserve a reminder", "nor the opinion resting on it")
    assert.notInclude(after, "flowerpot")
  })

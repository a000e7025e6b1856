/**
 * The removals that are not deletes reach what was derived from the memories too, over the real HTTP server on both
 * tiers. A document retained again in replace mode: its old memory's opinions (and the opinion resting on those),
 * dream evidence, anomaly, access history, mental model citation, chunk, trajectory point and the kept `.brain` file
 * go, an entity only the old text named is pruned while one the new text names again keeps its id, the dataset set
 * stops citing the old memory, and the stats count what is left. An invalidation: what rests on the memory goes, what
 * its restore needs (chunk, document, access history, dataset set) stays, the opinions resting on it wait in the archive,
 * and a restore brings the memory back with its opinions; a forget of the invalidated memory ends their wait.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync } from "node:fs"
import { BrainRuntime } from "../../../src/brain/BrainRuntime.ts"
import { assertOpinionsGone, reads, withDerived, withOpinions } from "../../support/DerivedState.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { recountStats } from "../../support/StatsRecount.ts"
import { testApp } from "../../support/TestServer.ts"

const secret = "Zephyrine keeps the spare office key under the blue flowerpot beside Quillon Tower."
const rewritten = "Zephyrine keeps the spare office key in the reception safe now."

/** A trajectory of the entity whose path runs through the memory, showing its preview, as a recompute stores it. */
const withTrajectory = (bank: string, entityId: string, unitId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const path = JSON.stringify([{
      unit_id: unitId,
      state: "hiding",
      occurred_sort_at: new Date().toISOString(),
      fact_preview: "keeps the key under the blue flowerpot"
    }])
    yield* sql`INSERT INTO entity_trajectories (bank_id, entity_id, state_vocabulary, vocabulary_hash, transition_matrix,
        current_state, viterbi_path, forecast_horizon, forecast_distribution, llm_model, prompt_version, fact_count,
        last_seq)
      VALUES (${bank}, ${entityId}, '["hiding"]'::jsonb, 'h', '[[1]]'::jsonb, 'hiding', ${path}::jsonb, 1,
        '{"hiding": 1}'::jsonb, 'offline', 'test', 1, 1)`
    const before = yield* ok("GET", `${bankPath(bank)}/entities/${entityId}/trajectory`)
    assert.include(before.text, "flowerpot", "the trajectory shows the memory before")
  })

const entityIds = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ canonicalName: string; id: string }>`SELECT canonical_name, id FROM entities
      WHERE bank_id = ${bank}`
    return Object.fromEntries(rows.map((row) => [row.canonicalName.toLowerCase(), row.id]))
  })

const countWhere = (query: Effect.Effect<ReadonlyArray<{ n: number }>, unknown, SqlClient.SqlClient>) =>
  Effect.map(Effect.orDie(query), (rows) => rows[0]!.n)

layer(testApp(), { excludeTestServices: true, timeout: "4 minutes" })(
  "replace and invalidate reach what is derived",
  (it) => {
    it.effect("a document retained again in replace mode leaves nothing of its old memory", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const bank = "replaced-document"
        const base = bankPath(bank)
        const id = yield* withDerived(bank, secret, {})
        const opinions = yield* withOpinions(bank, id)
        const before = yield* entityIds(bank)
        assert.containsAllKeys(before, ["zephyrine", "quillon tower"], "the old text named both entities")
        yield* withTrajectory(bank, before["zephyrine"]!, id)

        yield* ok("POST", `${base}/memories`, { items: [{ content: rewritten, document_id: `${bank}-doc` }] })
        yield* settled(bank)

        yield* assertOpinionsGone(bank, opinions)
        const runtime = yield* BrainRuntime
        assert.isFalse(existsSync(runtime.filePath(bank)), "the kept .brain file holding the old text was removed")
        const left = {
          memory: yield* countWhere(sql`SELECT count(*)::int AS n FROM memory_units WHERE id = ${id}`),
          dream_runs: yield* countWhere(sql`SELECT count(*)::int AS n FROM dream_runs WHERE bank_id = ${bank}`),
          dream_predictions: yield* countWhere(
            sql`SELECT count(*)::int AS n FROM dream_predictions WHERE bank_id = ${bank}`
          ),
          anomalies: yield* countWhere(
            sql`SELECT count(*)::int AS n FROM anomaly_events WHERE bank_id = ${bank} AND ${id} = ANY(unit_ids)`
          ),
          access_events: yield* countWhere(
            sql`SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = ${bank} AND item_id = ${id}`
          ),
          chunks: yield* countWhere(
            sql`SELECT count(*)::int AS n FROM chunks WHERE bank_id = ${bank} AND text ILIKE '%flowerpot%'`
          ),
          citing_sets: yield* countWhere(
            sql`SELECT count(*)::int AS n FROM taste_sets WHERE bank_id = ${bank} AND ${id} = ANY(memory_unit_ids)`
          ),
          sets: yield* countWhere(sql`SELECT count(*)::int AS n FROM taste_sets WHERE bank_id = ${bank}`)
        }
        assert.deepStrictEqual(left, {
          memory: 0,
          dream_runs: 0,
          dream_predictions: 0,
          anomalies: 0,
          access_events: 0,
          chunks: 0,
          citing_sets: 0,
          sets: 1 // the set is the user's data: it only stops citing the replaced memory
        })
        assert.notInclude((yield* ok("GET", `${base}/mental-models/keys`)).text, id, "the model citing it was emptied")
        assert.notInclude((yield* ok("GET", `${base}/dreams`)).text, "flowerpot")
        const trajectory = yield* call("GET", `${base}/entities/${before["zephyrine"]}/trajectory`)
        assert.notInclude(trajectory.text, "flowerpot", "the trajectory through the old memory is gone")

        // The document stays, with the new text; the entity graph has the entity named again, not the old one's.
        const document = yield* ok("GET", `${base}/documents/${bank}-doc`)
        assert.include(document.body.original_text, "reception safe")
        assert.notInclude(document.text, "flowerpot")
        const after = yield* entityIds(bank)
        assert.strictEqual(after["zephyrine"], before["zephyrine"], "an entity the new text names keeps its id")
        assert.notProperty(after, "quillon tower", "the entity only the old text named is pruned")
        assert.notInclude((yield* ok("GET", `${base}/entities`)).text, "Quillon")
        const recalled = yield* ok("POST", `${base}/memories/recall`, { query: "Where is the spare office key?" })
        assert.include(recalled.text, "reception safe")
        assert.notInclude(recalled.text, "flowerpot")
        const listed = yield* ok("GET", `${base}/memories/list?limit=100&type=observation`)
        assert.notInclude(listed.text, "flowerpot", "no observation holds the old text")

        const stats = (yield* ok("GET", `${base}/stats`)).body
        const fresh = yield* recountStats(bank)
        assert.deepStrictEqual(stats.nodes_by_fact_type, fresh.nodes_by_fact_type, "the stats count what is left")
        assert.deepStrictEqual(stats.links_by_link_type, fresh.links_by_link_type)
      }))

    it.effect("an invalidated memory takes what rests on it, keeps what its restore needs, and comes back", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const bank = "invalidated-memory"
        const base = bankPath(bank)
        const id = yield* withDerived(bank, secret, {})
        const opinions = yield* withOpinions(bank, id)
        const zephyrine = (yield* entityIds(bank))["zephyrine"]!
        yield* withTrajectory(bank, zephyrine, id)

        yield* ok("PATCH", `${base}/memories/${id}`, { state: "invalidated", reason: "moved" })
        yield* settled(bank)

        yield* assertOpinionsGone(bank, opinions)
        const count = (table: string, where: string) =>
          countWhere(sql`SELECT count(*)::int AS n FROM ${sql(table)} WHERE bank_id = ${bank} AND ${sql.unsafe(where)}`)
        const left = {
          dream_runs: yield* count("dream_runs", `'${id}' = ANY(evidence_ids)`),
          anomalies: yield* count("anomaly_events", `'${id}' = ANY(unit_ids)`),
          trajectories: yield* count("entity_trajectories", "true"),
          // Kept for the restore: the memory's source, its read history and the set it came from.
          chunks: yield* count("chunks", "text ILIKE '%flowerpot%'"),
          documents: yield* count("documents", `document_id = '${bank}-doc'`),
          access_events: yield* count("memory_access_events", `item_id = '${id}'`),
          dataset_sets: yield* count("taste_sets", `'${id}' = ANY(memory_unit_ids)`)
        }
        assert.deepStrictEqual(left, {
          dream_runs: 0,
          anomalies: 0,
          trajectories: 0,
          chunks: 1,
          documents: 1,
          access_events: left.access_events > 0 ? left.access_events : -1,
          dataset_sets: 1
        })
        assert.notInclude((yield* ok("GET", `${base}/mental-models/keys`)).text, id, "the model citing it was emptied")
        const archived = yield* ok("GET", `${base}/memories/${id}`)
        assert.strictEqual(archived.body.state, "invalidated", "the memory waits in the archive")

        // The opinions resting on it wait in the archive (an opinion cannot be restored by hand: it is derived).
        const waiting = yield* ok("GET", `${base}/memories/${opinions[0]}`)
        assert.strictEqual(waiting.body.state, "invalidated")
        assert.strictEqual(waiting.body.invalidation_reason, "rests on an invalidated memory")

        yield* ok("PATCH", `${base}/memories/${id}`, { state: "valid" })
        yield* settled(bank)
        const back = yield* reads(bank)
        assert.include(back, "flowerpot", "the restored memory is recalled again")
        assert.include(back, "careless habit", "the opinion resting on it comes back with it")
        assert.include(back, "deserve a reminder", "and the opinion resting on that opinion")
        const live = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE id IN ${sql.in(opinions)}`
        assert.sameMembers(live.map((row) => row.id), opinions)

        // Invalidated again, then forgotten for good: the opinions waiting for it go too.
        yield* ok("PATCH", `${base}/memories/${id}`, { state: "invalidated", reason: "moved again" })
        yield* settled(bank)
        const forgotten = yield* ok("POST", `${base}/forget`, { memory_ids: [id] })
        assert.strictEqual(forgotten.body.removed.invalidated_memories, 3, forgotten.text)
        const archive = yield* count("memory_unit_archive", "true")
        assert.strictEqual(archive, 0, "nothing waits in the archive for a memory that is gone")
      }))
  }
)

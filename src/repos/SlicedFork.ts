/**
 * A fork (a new bank from a branch, a commit or a live workspace), or a parked branch's first read copy, copied in
 * bounded slices, each its own short transaction, so the embedded tier's one database session is free between them
 * and a crash resumes where the last slice committed. The job is a row of `repo_forks` (migration 0037) naming the
 * source state (its table manifests, which garbage collection treats as a root until the fork ends) and how far the
 * copy got: first every global id gets its stable new name (`repo_id_maps`, a few top buckets of one table per
 * slice; the names are a hash of the target and the id, so a replayed slice names them the same), then rows are
 * inserted table by table, parents first, a few top buckets per slice. Must not decide repo semantics (which state a
 * ref names): that is `MemoryRepos`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { objectsLockShared } from "./ObjectsLock.ts"
import { insertedColumns, leavesUnder, quote, updateBankSql } from "./RowSql.ts"
import { literal } from "./VersionedTables.ts"
import type { Snapshots } from "./Snapshots.ts"

/**
 * Rows one slice aims to copy: the top buckets of a table are taken in groups holding about this many (weighted by
 * `rowWeight`). 2,000 links take about 0.3 s on PGlite (0.16 ms a link); 8,000 held the one session for 1.1–1.4 s a
 * slice, and other banks' writes waited that long.
 */
export const forkTuning = { sliceRows: 2_000 }

/**
 * What a row costs to copy, in links: a memory's insert feeds its HNSW vector index, its full-text, tag and time
 * indexes and a dozen b-trees (1.25 ms a memory against 0.16 ms a link on PGlite, a 2,000-memory fork), so a slice
 * takes fewer of them. Naming ids is cheap for every table.
 */
const rowWeight = (table: string, phase: ForkProgress["phase"]) => phase === "rows" && table === "memory_units" ? 8 : 1

export interface ForkProgress {
  readonly phase: "ids" | "rows"
  /** Index into the versioning plan. */
  readonly table: number
  /** Index into the table's sorted top buckets. */
  readonly top: number
}

/** Marks a job (in its request) that makes a parked branch's read copy, not a fork into a new bank. */
export const readCopyMark = "read_copy"

export const startForkProgress: ForkProgress = { phase: "ids", table: 0, top: 0 }

export interface ForkJob {
  readonly targetBankId: string
  readonly sourceRepoId: string
  readonly tables: Readonly<Record<string, string>>
  readonly rowCounts: Readonly<Record<string, number>>
  readonly progress: ForkProgress
  /** What the fork answers once done: the request and the source it resolved. */
  readonly request: Readonly<Record<string, unknown>>
}

/** The row objects under some nodes (`$2`: a JSON array of node hashes), as `body`. */
const rowsUnder = `(SELECT o.body FROM (${leavesUnder("SELECT value FROM jsonb_array_elements_text($2::jsonb)")}) lf
  CROSS JOIN LATERAL jsonb_each_text(lf.body) e
  JOIN repo_objects o ON o.hash = e.value) o`

/**
 * Runs one slice of fork `job`: steps (a group of top buckets of one table) until about `sliceRows` rows are
 * copied, so many small tables share a transaction; answers the next progress, or `done` when every table is
 * copied (the caller then finishes the bank in one last transaction). Must run inside a transaction that holds
 * the job row's lock.
 */
export const forkSlice = (snapshots: Snapshots["Service"], job: ForkJob) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
      Effect.orDie(sql.unsafe<A>(text, params))
    const plans = yield* snapshots.plans
    yield* run(objectsLockShared, []) // garbage collection does not sweep while a slice reads objects
    let progress: ForkProgress = job.progress
    let budget = forkTuning.sliceRows
    while (budget > 0) {
      const { phase, table, top } = progress
      const plan = plans[table]
      if (plan === undefined) {
        if (phase === "rows") return "done" as const
        progress = { phase: "rows", table: 0, top: 0 }
        continue
      }
      const hash = job.tables[plan.name]
      // The bank row's settings are written by the last transaction, onto the bank row the first one made.
      if (hash === undefined || plan.name === "banks" || (phase === "ids" && plan.identities.length === 0)) {
        progress = { phase, table: table + 1, top: 0 }
        continue
      }
      const manifest = yield* run<{ body: Record<string, string> }>(`SELECT body FROM repo_objects WHERE hash = $1`, [
        hash
      ])
      const buckets = Object.entries(manifest[0]?.body ?? {}).sort(([a], [b]) => Number(a) - Number(b))
      const rows = Math.max(1, job.rowCounts[plan.name] ?? buckets.length) * rowWeight(plan.name, phase)
      const perSlice = Math.max(1, Math.floor(buckets.length * budget / rows))
      const nodes = JSON.stringify(buckets.slice(top, top + perSlice).map(([, node]) => node))
      if (phase === "ids") {
        for (const column of plan.identities) {
          yield* run(
            `INSERT INTO repo_id_maps (workspace_bank_id, local_id, canonical_id)
             SELECT $1, md5($1 || ':' || v)::uuid::text, v FROM (
               SELECT DISTINCT o.body ->> ${literal(column)} AS v FROM ${rowsUnder}) s
             WHERE v IS NOT NULL
             ON CONFLICT DO NOTHING`,
            [job.targetBankId, nodes]
          )
        }
      } else {
        const { target, values } = insertedColumns(plan, { _tag: "ToLocal", param: "$1" })
        yield* run(
          `INSERT INTO ${quote(plan.name)} (${target.join(", ")})
           SELECT ${values} FROM ${rowsUnder}
           CROSS JOIN LATERAL jsonb_populate_record(NULL::${quote(plan.name)}, o.body) r
           WHERE $1::text IS NOT NULL`,
          [job.targetBankId, nodes]
        )
      }
      const taken = Math.min(perSlice, buckets.length - top)
      budget -= Math.max(1, Math.ceil(rows * taken / Math.max(1, buckets.length)))
      progress = top + perSlice < buckets.length
        ? { phase, table, top: top + perSlice }
        : { phase, table: table + 1, top: 0 }
    }
    return progress
  })

/**
 * The fork's last transaction, after every slice: the bank row's stored settings, the end of the id renaming, and
 * the bank's change-log horizon moved past every entry, so a brain built from the half-copied bank meanwhile (on
 * any node) rebuilds (as `Snapshots.restore` does). A branch's read copy keeps its renaming (`keepIds`): the
 * deltas that later move it to the branch's state name rows by their root-bank ids.
 */
export const finishFork = (snapshots: Snapshots["Service"], job: ForkJob, options: { readonly keepIds: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = (text: string, params: ReadonlyArray<unknown>) => Effect.orDie(sql.unsafe(text, params))
    const plans = yield* snapshots.plans
    const bankPlan = plans.find((plan) => plan.name === "banks")
    const bankHash = job.tables["banks"]
    if (bankPlan !== undefined && bankHash !== undefined) {
      yield* run(updateBankSql(bankPlan, "$2"), [job.targetBankId, bankHash])
    }
    yield* run(
      `INSERT INTO memory_change_horizons (bank_id, pruned_below)
       VALUES ($1, nextval(pg_get_serial_sequence('memory_unit_changes', 'change_seq')) + 1)
       ON CONFLICT (bank_id) DO UPDATE SET pruned_below = greatest(memory_change_horizons.pruned_below, excluded.pruned_below)`,
      [job.targetBankId]
    )
    if (!options.keepIds) yield* run(`DELETE FROM repo_id_maps WHERE workspace_bank_id = $1`, [job.targetBankId])
    yield* run(`DELETE FROM repo_forks WHERE target_bank_id = $1`, [job.targetBankId])
  })

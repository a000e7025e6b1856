/**
 * Garbage collection of the repo object store: deletes the objects (table manifests, nodes, leaves, rows) that no
 * branch reaches — not through its HEAD's history, nor its stashed working tree, nor its read copy's state — and
 * the commits no branch's history holds any more (orphaned by a hard reset or a branch delete). It is a durable
 * mark-and-sweep in bounded slices, each its own short transaction (state in `repo_gc_state` and `repo_gc_marks`,
 * migration 0037), so the embedded tier's one database session is free between slices (each waits for a lull in
 * requests, `Foreground`) and a crash resumes the
 * cycle on the next start. Must not decide what is versioned or how objects are hashed (`Snapshots`).
 *
 * Why a concurrent commit cannot lose an object it is about to reference (the race of every incremental mark-and-
 * sweep): every transaction that stores objects or reads a commit's objects holds the advisory lock
 * `engram.repo_objects` of its schema (`ObjectsLock.ts`) shared (`RepoStore.lockRepo`, the stores in `Snapshots`,
 * `WorkspaceTree`, `SlicedEnable`), and every slice that deletes holds it exclusive. So while a sweep slice runs, no such transaction is in flight,
 * and everything they made is committed and visible. The slice first marks the roots that appeared since the mark
 * began (a commit that reuses an old unreachable row, a stash, a branch moved by a reset) and their closure; only
 * when the marks are closed under the lock does it delete, and only objects older than the cycle (a workspace diff
 * stores a stash no branch names, and reads it after its transaction). Roots that disappear meanwhile only keep
 * their objects until the next cycle. Commits orphaned before a cycle are deleted in its first slice, under the
 * same lock, so a reset can no longer name a commit whose objects a later slice deletes.
 */
import { Config, Context, Duration, Effect, Layer, Queue } from "effect"
import { SqlClient } from "effect/sql"
import { Foreground } from "../bank/Foreground.ts"
import { objectsLockExclusive } from "./ObjectsLock.ts"

export interface GcTuning {
  /**
   * Marked objects whose children one mark slice adds: a node has up to 256 and a leaf about as many, so 5 is about
   * 1,250 marks a slice, 20–80 ms on PGlite (200 made slices of ~50,000 inserts, which held PGlite's one session for
   * seconds at 10k memories while the bench measured status and checkouts; 20 made 70–320 ms ones, back to back, which
   * made a status right after an enable take 0.8–2.3 s at 5k memories).
   */
  readonly markObjects: number
  /** Objects one sweep slice looks at, in hash order. */
  readonly sweepObjects: number
  /** How long after the first request of a burst the collection starts, so a burst of commits asks once. */
  readonly delay: Duration.Duration
  /** Orphaned commits younger than this are kept (like git's reflog): a mistaken hard reset can be undone by id. */
  readonly orphanGrace: Duration.Duration
}

export const defaultGcTuning: GcTuning = {
  markObjects: 5,
  sweepObjects: 5_000,
  delay: Duration.seconds(30),
  orphanGrace: Duration.hours(1)
}

export interface GcResult {
  readonly cycles: number
  readonly marked: number
  readonly removed: number
  readonly removedBytes: number
  readonly commitsRemoved: number
}

type Step =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Working"; readonly started: boolean }
  | { readonly _tag: "Waiting" }
  | { readonly _tag: "Finished"; readonly result: Omit<GcResult, "cycles"> }

interface StateRow {
  readonly phase: "mark" | "sweep" | null
  readonly startedAt: Date | null
  readonly sweepAfter: string | null
  readonly marked: string | number
  readonly removed: string | number
  readonly removedBytes: string | number
  readonly commitsRemoved: string | number
}

/** Every table manifest a branch can still reach (commit trees, stashed working trees, read copies' states) or a fork under way copies. */
const rootsSql = `
  SELECT e.value AS hash FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e
  UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.state_tables, '{}'::jsonb)) e
  UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.replica_tables, '{}'::jsonb)) e
  UNION SELECT e.value FROM repo_forks f CROSS JOIN LATERAL jsonb_each_text(f.tables) e`

const markRootsSql = `
  WITH added AS (INSERT INTO repo_gc_marks (hash, expanded) SELECT hash, false FROM (${rootsSql}) r
    ON CONFLICT (hash) DO NOTHING RETURNING 1)
  SELECT count(*)::int AS n FROM added`

/**
 * Commits no branch's history holds (the parent chains from every head) and older than the grace ($1, in
 * milliseconds), deleted with the cycle's first slice.
 */
const dropOrphanCommitsSql = `
  WITH RECURSIVE held(id) AS (
    SELECT head_commit_id FROM repo_branches WHERE head_commit_id IS NOT NULL
    UNION
    SELECT c.parent_commit_id FROM repo_commits c JOIN held ON c.commit_id = held.id WHERE c.parent_commit_id IS NOT NULL
  ),
  gone AS (DELETE FROM repo_commits c WHERE NOT EXISTS (SELECT 1 FROM held WHERE held.id = c.commit_id)
    AND c.created_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING 1)
  SELECT count(*)::int AS n FROM gone`

/**
 * Marks the children of up to $1 marked objects and records those as expanded. Row objects (and hashes not stored,
 * which have nothing under them) are marked expanded at once: only manifests, nodes and leaves have children.
 */
const expandSql = `
  WITH batch AS (SELECT hash FROM repo_gc_marks WHERE NOT expanded LIMIT $1),
  children AS (
    SELECT DISTINCT e.value AS hash FROM batch
    JOIN repo_objects o ON o.hash = batch.hash AND o.kind <> 'row'
    CROSS JOIN LATERAL jsonb_each_text(o.body) e),
  added AS (
    INSERT INTO repo_gc_marks (hash, expanded)
    SELECT c.hash, coalesce(o.kind = 'row', true) FROM children c LEFT JOIN repo_objects o ON o.hash = c.hash
    ON CONFLICT (hash) DO NOTHING RETURNING 1),
  done AS (UPDATE repo_gc_marks m SET expanded = true FROM batch WHERE m.hash = batch.hash RETURNING 1)
  SELECT (SELECT count(*) FROM done)::int AS expanded, (SELECT count(*) FROM added)::int AS added`

/** Deletes the unmarked objects among the next $2 hashes after $1 that are older than the cycle ($3). */
const sweepSql = `
  WITH batch AS (SELECT hash FROM repo_objects WHERE hash > $1 ORDER BY hash LIMIT $2),
  gone AS (
    DELETE FROM repo_objects o USING batch WHERE o.hash = batch.hash AND o.created_at < $3::timestamptz
      AND NOT EXISTS (SELECT 1 FROM repo_gc_marks m WHERE m.hash = o.hash)
    RETURNING o.size_bytes)
  SELECT (SELECT max(hash) FROM batch) AS last, (SELECT count(*) FROM gone)::int AS removed,
    (SELECT coalesce(sum(size_bytes), 0) FROM gone)::bigint AS bytes`

export class GarbageCollection extends Context.Service<GarbageCollection, {
  /** Asks for a collection soon (durably); requests within `delay` of each other make one collection. */
  readonly request: Effect.Effect<void>
  /**
   * Runs the cycle under way, and a new one, to its end now, in slices; answers what it removed. `orphanGrace`
   * overrides the configured age under which orphaned commits are kept.
   */
  readonly collect: (options?: { readonly orphanGrace?: Duration.Input }) => Effect.Effect<GcResult>
}>()("engram/repos/GarbageCollection") {
  static readonly layerWith = (tuning: Partial<GcTuning>) =>
    Layer.effect(
      GarbageCollection,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const foreground = yield* Foreground
        const settings = { ...defaultGcTuning, ...tuning }
        const run = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
          Effect.orDie(sql.unsafe<A>(text, params))
        const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (error) => Effect.die(error)))
        // An enable's staged objects are reachable from nothing until its initial commit: nothing is swept meanwhile.
        const enabling = Effect.map(
          run<{ n: number }>(`SELECT count(*)::int AS n FROM memory_repos WHERE enable_progress IS NOT NULL`),
          (rows) => (rows[0]?.n ?? 0) > 0
        )
        const expand = Effect.map(
          run<{ expanded: number; added: number }>(expandSql, [settings.markObjects]),
          (rows) => ({ expanded: rows[0]?.expanded ?? 0, added: rows[0]?.added ?? 0 })
        )

        const start = (state: StateRow, force: boolean, grace: Duration.Duration) =>
          Effect.gen(function*() {
            const asked = yield* run<{ asked: boolean }>(`SELECT EXISTS (SELECT 1 FROM repo_gc_requests) AS asked`)
            if (!force && asked[0]?.asked !== true) return { _tag: "Idle" } as Step
            yield* run(objectsLockExclusive)
            if (yield* enabling) return { _tag: "Waiting" } as Step
            // The requests this cycle answers; one made after this statement makes another cycle.
            yield* run(`DELETE FROM repo_gc_requests`)
            const orphans = (yield* run<{ n: number }>(dropOrphanCommitsSql, [Duration.toMillis(grace)]))[0]?.n ?? 0
            yield* run(`DELETE FROM repo_gc_marks`)
            const roots = (yield* run<{ n: number }>(markRootsSql))[0]?.n ?? 0
            yield* run(
              `UPDATE repo_gc_state SET phase = 'mark', started_at = now(), sweep_after = '',
                 marked = $1, removed = 0, removed_bytes = 0, commits_removed = $2`,
              [roots, orphans]
            )
            return { _tag: "Working", started: true } as Step
          })

        const mark = Effect.gen(function*() {
          const step = yield* expand
          if (step.expanded === 0) yield* run(`UPDATE repo_gc_state SET phase = 'sweep'`)
          else yield* run(`UPDATE repo_gc_state SET marked = marked + $1`, [step.added])
          return { _tag: "Working", started: false } as Step
        })

        const sweep = (state: StateRow) =>
          Effect.gen(function*() {
            yield* run(objectsLockExclusive)
            if (yield* enabling) return { _tag: "Waiting" } as Step
            // Roots made since the mark began, and what they reach, are marked before anything is deleted: a slice
            // deletes only when, under the exclusive lock, every mark is expanded.
            const late = (yield* run<{ n: number }>(markRootsSql))[0]?.n ?? 0
            const step = yield* expand
            if (late > 0 || step.expanded > 0) {
              yield* run(`UPDATE repo_gc_state SET marked = marked + $1`, [late + step.added])
              return { _tag: "Working", started: false } as Step
            }
            const swept = (yield* run<{ last: string | null; removed: number; bytes: string | number }>(sweepSql, [
              state.sweepAfter ?? "",
              settings.sweepObjects,
              state.startedAt
            ]))[0]!
            if (swept.last !== null) {
              yield* run(
                `UPDATE repo_gc_state SET sweep_after = $1, removed = removed + $2, removed_bytes = removed_bytes + $3`,
                [swept.last, swept.removed, Number(swept.bytes)]
              )
              return { _tag: "Working", started: false } as Step
            }
            yield* run(`DELETE FROM repo_gc_marks`)
            const done = (yield* run<StateRow>(
              `UPDATE repo_gc_state SET phase = NULL, sweep_after = NULL, finished_at = now() RETURNING *`
            ))[0]!
            return {
              _tag: "Finished",
              result: {
                marked: Number(done.marked),
                removed: Number(done.removed),
                removedBytes: Number(done.removedBytes),
                commitsRemoved: Number(done.commitsRemoved)
              }
            } as Step
          })

        /** One slice, in its own transaction; the state row's lock makes slices of two nodes take turns. */
        const slice = (force: boolean, grace: Duration.Duration) =>
          inTransaction(Effect.gen(function*() {
            const state = (yield* run<StateRow>(`SELECT * FROM repo_gc_state FOR UPDATE`))[0]
            if (state === undefined) return { _tag: "Idle" } as Step
            if (state.phase === null) return yield* start(state, force, grace)
            return state.phase === "mark" ? yield* mark : yield* sweep(state)
          }))

        /**
         * Slices until nothing is asked for. Forced (`collect`), until a cycle that began in this call ends: one
         * under way began before what the caller wants collected, so it is finished and another one run.
         */
        const cycles = (force: boolean, grace: Duration.Duration = settings.orphanGrace) =>
          Effect.gen(function*() {
            const total = { cycles: 0, marked: 0, removed: 0, removedBytes: 0, commitsRemoved: 0 }
            let startedHere = false
            while (true) {
              const step = yield* slice(force && !startedHere, grace)
              if (step._tag === "Idle") return total
              if (step._tag === "Waiting") {
                yield* Effect.sleep("1 second")
                continue
              }
              if (step._tag === "Finished") {
                total.cycles++
                total.marked += step.result.marked
                total.removed += step.result.removed
                total.removedBytes += step.result.removedBytes
                total.commitsRemoved += step.result.commitsRemoved
                yield* Effect.logInfo("repo garbage collection finished").pipe(Effect.annotateLogs(step.result))
                if (force && startedHere) return total
                continue
              }
              if (step.started) {
                startedHere = true
                yield* Effect.logInfo("repo garbage collection started")
              }
              // Between slices the collector waits for a moment with no request in flight (at most the longest wait of
              // background work), so a status or a recall is not queued behind one slice per statement.
              yield* foreground.yieldToRequests
            }
          })

        const wakeups = yield* Queue.sliding<void>(1)
        const request = Effect.andThen(
          Effect.orDie(sql`INSERT INTO repo_gc_requests DEFAULT VALUES`),
          Effect.sync(() => Queue.offerUnsafe(wakeups, undefined))
        )
        // The collector: on start (a cycle a crash interrupted, or a request it left) and after each burst of requests.
        Queue.offerUnsafe(wakeups, undefined)
        yield* Effect.forever(Effect.gen(function*() {
          yield* Queue.take(wakeups)
          yield* Effect.sleep(settings.delay)
          yield* Queue.clear(wakeups)
          yield* cycles(false).pipe(
            Effect.catchCause((cause) =>
              Effect.logWarning("repo garbage collection failed; retried on the next request", cause)
            )
          )
        })).pipe(Effect.withTracerEnabled(false), Effect.forkScoped)

        return GarbageCollection.of({
          request,
          collect: (options) =>
            Effect.withSpan(
              cycles(
                true,
                options?.orphanGrace === undefined
                  ? settings.orphanGrace
                  : Duration.fromInputUnsafe(options.orphanGrace)
              ),
              "GarbageCollection.collect"
            )
        })
      })
    )

  /**
   * Tuned by `SERVICE_API_REPO_GC_DELAY` (default 30 s), `SERVICE_API_REPO_GC_SLICE` (objects a sweep slice reads)
   * and `SERVICE_API_REPO_GC_ORPHAN_GRACE` (default 1 hour).
   */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const delay = yield* Config.Duration("SERVICE_API_REPO_GC_DELAY").pipe(Config.withDefault(defaultGcTuning.delay))
    const sweepObjects = yield* Config.Int("SERVICE_API_REPO_GC_SLICE").pipe(
      Config.withDefault(defaultGcTuning.sweepObjects)
    )
    const orphanGrace = yield* Config.Duration("SERVICE_API_REPO_GC_ORPHAN_GRACE").pipe(
      Config.withDefault(defaultGcTuning.orphanGrace)
    )
    return GarbageCollection.layerWith({
      delay,
      orphanGrace,
      sweepObjects,
      markObjects: Math.max(1, Math.min(defaultGcTuning.markObjects, Math.floor(sweepObjects / 25)))
    })
  }))
}

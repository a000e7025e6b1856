/**
 * The graph snapshot of each bank, built lazily on first use and kept until a write invalidates it, the bank's
 * actor passivates (`drop`) or it goes unused for the idle time-to-live. It holds no database access of its own:
 * the caller passes the effect that loads the bank's nodes and links, and concurrent callers share one build.
 */
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Schedule } from "effect"
import type { BuildOptions, GraphSource } from "./GraphSnapshot.ts"
import { GraphSnapshot } from "./GraphSnapshot.ts"

export interface GraphSnapshotsOptions {
  /** A snapshot unused for this long is released. Default 5 minutes. */
  readonly idleTimeToLive?: Duration.Input
  readonly build?: BuildOptions
}

interface Entry {
  /** Bumped by `invalidate`: a build started under an older version must not be stored. */
  version: number
  snapshot: GraphSnapshot | undefined
  /** The build in flight; it completes with `undefined` when the build failed or was interrupted. */
  building: { readonly version: number; readonly done: Deferred.Deferred<GraphSnapshot | undefined> } | undefined
  lastUsed: number
}

export class GraphSnapshots extends Context.Service<GraphSnapshots, {
  /**
   * The bank's current snapshot, built with `load` when there is none (or it was invalidated). Callers that
   * arrive during a build wait for it; if that build fails they each try again with their own `load`.
   */
  readonly get: <E, R>(bankId: string, load: Effect.Effect<GraphSource, E, R>) => Effect.Effect<GraphSnapshot, E, R>
  /** The bank's graph changed: the next `get` rebuilds (builds already running are not reused after this). */
  readonly invalidate: (bankId: string) => Effect.Effect<void>
  /** Releases the bank's snapshot (passivation). */
  readonly drop: (bankId: string) => Effect.Effect<void>
  /** Bytes held by all cached snapshots. */
  readonly size: Effect.Effect<number>
}>()("engram/memory/recall/graph/GraphSnapshots") {
  static readonly layerWith = (options: GraphSnapshotsOptions) =>
    Layer.effect(
      GraphSnapshots,
      Effect.gen(function*() {
        const timeToLive = Duration.toMillis(options.idleTimeToLive ?? Duration.minutes(5))
        const entries = new Map<string, Entry>()

        const build = <E, R>(bankId: string, entry: Entry, load: Effect.Effect<GraphSource, E, R>) => {
          const version = entry.version
          const done = Deferred.makeUnsafe<GraphSnapshot | undefined>()
          entry.building = { version, done }
          return load.pipe(
            Effect.map((source) => {
              const snapshot = GraphSnapshot.build(source, options.build)
              if (entries.get(bankId) === entry && entry.version === version) entry.snapshot = snapshot
              return snapshot
            }),
            Effect.tap((snapshot) =>
              Effect.annotateCurrentSpan({
                nodes: snapshot.nodeCount,
                edges: snapshot.edgeCount,
                bytes: snapshot.byteSize,
                buildMillis: snapshot.buildMillis
              })
            ),
            Effect.withSpan("GraphSnapshots.build", { attributes: { bankId } }),
            Effect.onExit((exit) =>
              Effect.sync(() => {
                if (entry.building?.done === done) entry.building = undefined
                Deferred.doneUnsafe(done, Effect.succeed(Exit.isSuccess(exit) ? exit.value : undefined))
              })
            )
          )
        }

        const lookup = <E, R>(
          bankId: string,
          load: Effect.Effect<GraphSource, E, R>
        ): Effect.Effect<GraphSnapshot, E, R> =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            // Everything from the lookup to registering a build is synchronous, so two callers cannot both
            // decide to build the same version.
            Effect.suspend(() => {
              let entry = entries.get(bankId)
              if (entry === undefined) {
                entry = { version: 0, snapshot: undefined, building: undefined, lastUsed: now }
                entries.set(bankId, entry)
              }
              entry.lastUsed = now
              if (entry.snapshot !== undefined) return Effect.succeed(entry.snapshot)
              if (entry.building !== undefined && entry.building.version === entry.version) {
                return Effect.flatMap(
                  Deferred.await(entry.building.done),
                  (shared) => shared === undefined ? lookup(bankId, load) : Effect.succeed(shared)
                )
              }
              return build(bankId, entry, load)
            }))

        const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            for (const [bankId, entry] of entries) {
              if (entry.building === undefined && now - entry.lastUsed >= timeToLive) entries.delete(bankId)
            }
          }))
        yield* sweep.pipe(
          Effect.repeat(Schedule.spaced(Duration.millis(Math.min(60_000, Math.max(1_000, timeToLive / 2))))),
          Effect.forkScoped
        )

        return GraphSnapshots.of({
          get: Effect.fn("GraphSnapshots.get")(function*<E, R>(bankId: string, load: Effect.Effect<GraphSource, E, R>) {
            return yield* lookup(bankId, load)
          }),
          invalidate: (bankId) =>
            Effect.sync(() => {
              const entry = entries.get(bankId)
              if (entry === undefined) return
              entry.version++
              entry.snapshot = undefined
            }),
          drop: (bankId) => Effect.sync(() => void entries.delete(bankId)),
          size: Effect.sync(() => {
            let bytes = 0
            for (const entry of entries.values()) bytes += entry.snapshot?.byteSize ?? 0
            return bytes
          })
        })
      })
    )

  static readonly layer = GraphSnapshots.layerWith({})
}

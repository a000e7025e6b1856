/**
 * `BankActors` when engram runs as several nodes (SERVICE_API_CLUSTER_MODE=runner|client). Every call goes to
 * the bank's entity through `effect/cluster`, so it reaches the runner that owns the bank's shard; there the
 * entity hands it to the ordinary local bank actor (src/bank/BankActors.ts), which claims and runs the bank's
 * operations exactly as in a single process. A client node runs no actors at all.
 *
 * Exactly-once across a runner's death rests on the operations table, not on messages: when a runner takes a
 * shard (at start, or from a runner that died or left), it re-queues the operations its banks left `running` and
 * wakes every bank of the shard with pending work. Only one runner holds a shard's lock at a time, so nothing
 * else can legitimately be running those rows.
 */
import { Context, Duration, Effect, Layer, Option, Schedule, Scope } from "effect"
import { ClusterError, Entity, EntityId, ShardId, Sharding } from "effect/cluster"
import type { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql"
import { type ActorStatus, BankActors } from "../bank/BankActors.ts"
import { BankBrains } from "../brain/BankBrains.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { BankEntity } from "./BankEntity.ts"
import { BankReads, BankViews, BankWrites } from "./BankReads.ts"
import { ClusterNode, type ReadRouting } from "./ClusterNode.ts"

const shardGroup = "default"

/** How often a runner looks at which shards it holds; a cheap in-memory check, the cluster polls PostgreSQL anyway. */
const shardWatchInterval = Duration.seconds(1)

const isTransportError = (
  error: unknown
): error is
  | ClusterError.MailboxFull
  | ClusterError.AlreadyProcessingMessage
  | ClusterError.PersistenceError
  | ClusterError.EntityNotAssignedToRunner =>
  error instanceof ClusterError.MailboxFull || error instanceof ClusterError.AlreadyProcessingMessage ||
  error instanceof ClusterError.PersistenceError || error instanceof ClusterError.EntityNotAssignedToRunner

const unknownStatus: ActorStatus = { active: false, currentOperationId: null, circuit: "closed", retryAfterMs: null }

export const makeClusterBankActors = Effect.gen(function*() {
  const config = yield* EngramConfig
  const sharding = yield* Sharding.Sharding
  const sql = yield* SqlClient.SqlClient
  const brains = yield* BankBrains
  const scope = yield* Effect.scope
  const isRunner = config.cluster.mode === "runner"
  // The local actors exist only on a runner; they are finalized before the sharding that routes to them, so a
  // runner that stops gives its running rows back before its shards move.
  const local = isRunner ? Context.get(yield* Layer.build(BankActors.layer), BankActors) : undefined
  const clientFor = yield* sharding.makeClient(BankEntity)
  const readsClientFor = yield* sharding.makeClient(BankReads)
  const writesClientFor = yield* sharding.makeClient(BankWrites)
  const viewsClientFor = yield* sharding.makeClient(BankViews)
  let inFlight = 0

  /** Counts a message this node sent and has not seen through yet (for `/metrics`). */
  const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => inFlight++),
      () => effect,
      () => Effect.sync(() => inFlight--)
    )

  // During a hand-over the owner may be unknown or unreachable for a few seconds: retry, then give up quietly —
  // the row stays pending and the shard's next owner sweeps it.
  const handOverRetry = { schedule: Schedule.spaced(Duration.millis(250)), times: 40 }

  const wake = (bankId: string) =>
    clientFor(bankId).Wake(undefined, { discard: true }).pipe(
      Effect.retry(handOverRetry),
      counted,
      Effect.catchCause((cause) => Effect.logWarning("could not wake the bank's owner; its next owner will", cause)),
      Effect.annotateLogs({ bankId }),
      Effect.forkIn(scope),
      Effect.asVoid
    )

  /** Tells the bank's owner that this node wrote to the bank, unless this node is the owner (it knows already). */
  const changedHere = (bankId: string) =>
    isRunner && owned.has(shardOf(bankId))
      ? Effect.void
      : clientFor(bankId).Changed(undefined, { discard: true }).pipe(
        Effect.retry(handOverRetry),
        counted,
        Effect.catchCause((cause) => Effect.logWarning("could not tell the bank's owner about a write", cause)),
        Effect.annotateLogs({ bankId }),
        Effect.forkIn(scope),
        Effect.asVoid
      )

  const status = (bankId: string) =>
    clientFor(bankId).Status(undefined).pipe(
      Effect.timeout(Duration.seconds(5)),
      counted,
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning("the bank's owner did not report its status", cause), unknownStatus)
      )
    )

  const interrupt = (operationId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT bank_id FROM operations WHERE id = ${operationId}`.pipe(Effect.orDie)
      const bankId = rows[0]?.["bankId"]
      if (typeof bankId !== "string") return
      yield* clientFor(bankId).Interrupt({ operationId }).pipe(
        Effect.timeout(Duration.seconds(10)),
        counted,
        Effect.catchCause((cause) => Effect.logWarning("could not reach the bank's owner to interrupt", cause))
      )
    })

  const shardIds = Array.from({ length: config.cluster.shards }, (_, index) => ShardId.make(shardGroup, index + 1))
  const shardOf = (bankId: string) => sharding.getShardId(EntityId.make(bankId), shardGroup).toString()
  let owned = new Set<string>()
  /** Banks whose local actor this runner started, to stop them should a shard go without its entity's notice. */
  const hosted = new Set<string>()

  /**
   * Takes over the banks of shards this runner just acquired: operations left `running` go back to `pending`
   * (the runner that ran them is gone or gave the shard up) and every bank with pending work wakes.
   */
  const adopt = (acquired: ReadonlySet<string>) =>
    Effect.gen(function*() {
      if (local === undefined) return
      const rows = yield* sql`SELECT DISTINCT bank_id FROM operations WHERE status IN ('pending', 'running')`
      const banks = rows.map((row) => String(row["bankId"])).filter((bankId) => acquired.has(shardOf(bankId)))
      for (const bankId of banks) {
        const running = yield* local.status(bankId)
        const requeued = yield* sql`
          UPDATE operations o SET status = 'pending', updated_at = now()
          WHERE bank_id = ${bankId} AND status = 'running' AND id <> ${running.currentOperationId ?? ""}
            AND NOT EXISTS (SELECT 1 FROM operations c WHERE c.parent_id = o.id)
          RETURNING id`
        if (requeued.length > 0) {
          yield* Effect.logInfo("re-queued operations of a bank whose shard moved here", {
            bankId,
            operations: requeued.length
          })
        }
        // Through the entity, so the entity exists here and stops the actor if the shard moves on.
        yield* wake(bankId)
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError("could not take over the banks of acquired shards", cause)))

  const watchShards = Effect.gen(function*() {
    while (true) {
      const now = new Set(shardIds.filter((id) => sharding.hasShardId(id)).map((id) => id.toString()))
      const acquired = new Set([...now].filter((id) => !owned.has(id)))
      const lost = [...owned].filter((id) => !now.has(id)).length
      owned = now
      // Safety net for a bank whose entity had passivated while its actor still worked: the entity's finalizer
      // could not stop it when the shard left, so stop it here.
      if (lost > 0 && local !== undefined) {
        for (const bankId of [...hosted].filter((bank) => !now.has(shardOf(bank)))) {
          hosted.delete(bankId)
          yield* local.stop(bankId)
        }
      }
      if (acquired.size > 0 || lost > 0) {
        yield* Effect.logInfo("shards changed", { owned: now.size, acquired: acquired.size, lost })
      }
      if (acquired.size > 0) yield* adopt(acquired)
      yield* Effect.sleep(shardWatchInterval)
    }
  })

  /** The entity's handlers on this runner: each instance serves one bank and forwards to its local actor. */
  const handlers = Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const bankId = address.entityId
    const actors = local!
    // Once per activation (entities passivate with the actor's idle timeout): says where each bank lives.
    yield* Effect.logInfo(`bank ${bankId} is hosted on this runner`)
    // The entity stops when its shard moves away (rebalancing, shutdown) or when it idles. A moving shard stops
    // the local actor too, before the lock is released: its running row goes back to pending for the new owner,
    // and nothing here claims another. An idle passivation leaves the actor alone (it may be mid-operation).
    const shard = address.shardId
    yield* Effect.addFinalizer(() => sharding.hasShardId(shard) ? Effect.void : actors.stop(bankId))
    return BankEntity.of({
      Wake: () => Effect.andThen(Effect.sync(() => hosted.add(bankId)), actors.wake(bankId)),
      Interrupt: ({ payload }) => actors.interrupt(payload.operationId),
      Status: () => actors.status(bankId),
      Changed: () => brains.changed(bankId)
    })
  })

  // Registered only once every task handler is, so a woken bank finds its handler (as BankActors.start).
  const start = isRunner
    ? Effect.gen(function*() {
      yield* sharding.registerEntity(BankEntity, handlers, { maxIdleTime: config.actorIdleTimeout })
      yield* Effect.forkIn(watchShards.pipe(Effect.withTracerEnabled(false)), scope)
    }).pipe(Scope.provide(scope))
    : Effect.void

  // The owner's answer (a 404, a 400, a 503) stays a failure; the transport's own (no owner yet, its mailbox,
  // persistence) becomes a defect, which the sender answers locally.
  const onOwner = <A, E>(
    effect: Effect.Effect<
      A,
      | E
      | ClusterError.MailboxFull
      | ClusterError.AlreadyProcessingMessage
      | ClusterError.PersistenceError
      | ClusterError.EntityNotAssignedToRunner
    >
  ) =>
    effect.pipe(
      Effect.catchIf(isTransportError, (error) => Effect.die(error)),
      counted
    ) as Effect.Effect<
      A,
      Exclude<
        E,
        | ClusterError.MailboxFull
        | ClusterError.AlreadyProcessingMessage
        | ClusterError.PersistenceError
        | ClusterError.EntityNotAssignedToRunner
      >
    >

  // Requests of one bank run side by side, as they do in one process: the entity is only an address.
  const serveOn = <Type extends string, Rpcs extends Rpc.Any>(
    entity: Entity.Entity<Type, Rpcs>,
    build: (bankId: string) => Entity.HandlersFrom<Rpcs>
  ) =>
    isRunner
      ? sharding.registerEntity(
        entity,
        Effect.map(Entity.CurrentAddress, (address) => build(address.entityId)),
        { maxIdleTime: config.actorIdleTimeout, concurrency: "unbounded", mailboxCapacity: "unbounded" }
      ).pipe(Scope.provide(scope))
      : Effect.void

  const reads: ReadRouting = {
    recallOnOwner: (bankId, request) => onOwner(readsClientFor(bankId).Recall({ request })),
    serve: (recall) =>
      serveOn(BankReads, (bankId) => BankReads.of({ Recall: ({ payload }) => recall(bankId, payload.request) })),
    retainOnOwner: (bankId, request) => onOwner(writesClientFor(bankId).Retain({ request })),
    serveRetain: (retain) =>
      serveOn(BankWrites, (bankId) => BankWrites.of({ Retain: ({ payload }) => retain(bankId, payload.request) })),
    influenceOnOwner: (bankId, options) => onOwner(viewsClientFor(bankId).Influence({ options })),
    serveInfluence: (influence) =>
      serveOn(BankViews, (bankId) => BankViews.of({ Influence: ({ payload }) => influence(bankId, payload.options) }))
  }

  const node = ClusterNode.of({
    role: config.cluster.mode,
    shardsOwned: Effect.sync(() => owned.size),
    entityCount: sharding.activeEntityCount,
    messagesInFlight: Effect.sync(() => inFlight),
    ownsBank: (bankId) => Effect.sync(() => isRunner && owned.has(shardOf(bankId))),
    reads: Option.some(reads),
    changedHere,
    singleton: (name, run) =>
      isRunner
        ? sharding.registerSingleton(
          name,
          // Logged so an operator (and the cluster test) can see where each one runs. A loop that finishes (the
          // warm-up) still holds its place until the shard moves, as effect/cluster keeps it.
          Effect.logInfo(`singleton ${name} runs on this runner`).pipe(
            Effect.andThen(run),
            Effect.andThen(Effect.never),
            Effect.ensuring(Effect.logInfo(`singleton ${name} stopped on this runner`))
          )
        )
        : Effect.void
  })

  const actors = BankActors.of({
    wake,
    interrupt,
    status,
    stop: (bankId) => local?.stop(bankId) ?? Effect.void,
    activeCount: local?.activeCount ?? Effect.succeed(0),
    start
  })
  return { actors, node }
})

/** Provides `BankActors` routed through the cluster and the node's `ClusterNode` report; needs `Sharding`. */
export const ClusterBankActorsLayer = Layer.effectContext(
  Effect.map(
    makeClusterBankActors,
    ({ actors, node }) => Context.make(BankActors, actors).pipe(Context.add(ClusterNode, node))
  )
)

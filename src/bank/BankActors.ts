/**
 * One supervised actor (fiber) per bank: it owns the bank's wake-up queue, the operation it is running and
 * its circuit-breaker key. Actors are created on demand, passivate after an idle period and are interrupted
 * when the service shuts down. They never hold state that matters: the operations table is the truth, so an
 * actor that dies loses nothing and a new one picks the work up again.
 */
import { Cause, Context, Duration, Effect, Exit, Fiber, Layer, Option, Queue, Schedule, Semaphore } from "effect"
import { CircuitBreaker } from "effect/persistence"
import { SqlClient } from "effect/sql"
import { EngramConfig } from "../config/EngramConfig.ts"
import { BankEvents } from "../events/BankEvents.ts"
import type { OperationRecord } from "./OperationStore.ts"
import { OperationStore } from "./OperationStore.ts"
import { linkToQueuer } from "./QueuedFrom.ts"
import { TaskFailure, TaskRegistry } from "./TaskRegistry.ts"
import { Foreground } from "./Foreground.ts"

export interface ActorStatus {
  readonly active: boolean
  readonly currentOperationId: string | null
  readonly circuit: "closed" | "open" | "half_open"
  readonly retryAfterMs: number | null
}

interface Actor {
  readonly wakeups: Queue.Queue<void>
  /** What the actor runs: one operation, or several of a type that runs together (queued retains). */
  current: ReadonlyArray<{ readonly operationId: string; readonly fiber: Fiber.Fiber<void> }>
  loop?: Fiber.Fiber<void>
}

export class BankActors extends Context.Service<BankActors, {
  /** Makes sure the bank's actor runs and looks for pending work. */
  readonly wake: (bankId: string) => Effect.Effect<void>
  /** Interrupts the operation if this node is running it (its row must already say `cancelled`). */
  readonly interrupt: (operationId: string) => Effect.Effect<void>
  readonly status: (bankId: string) => Effect.Effect<ActorStatus>
  /**
   * Stops the bank's actor now: the operation it runs goes back to pending. For a cluster runner whose shard
   * moves away, so the bank's work continues on the shard's new owner and nowhere else.
   */
  readonly stop: (bankId: string) => Effect.Effect<void>
  readonly activeCount: Effect.Effect<number>
  /**
   * Wakes every bank with pending work (work a dead process left running was re-queued when the layer was
   * built). Run once at start, after every task handler is registered.
   */
  readonly start: Effect.Effect<void>
}>()("engram/bank/BankActors") {
  static readonly layer = Layer.effect(
    BankActors,
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const store = yield* OperationStore
      const registry = yield* TaskRegistry
      const foreground = yield* Foreground
      const events = yield* BankEvents
      const sql = yield* SqlClient.SqlClient
      const scope = yield* Effect.scope
      const breaker = yield* CircuitBreaker.make({
        tripPolicy: CircuitBreaker.consecutive(config.circuitBreakerFailures),
        openDuration: config.circuitBreakerOpenFor
      }).pipe(Effect.provide(CircuitBreaker.layerStoreMemory()))
      const actors = new Map<string, Actor>()
      const lock = yield* Semaphore.make(1)

      const circuitState = (bankId: string) =>
        breaker.state(bankId).pipe(Effect.orElseSucceed(() => ({ _tag: "Closed" as const, key: bankId })))

      /** Turns whatever ended the task into the message stored on the operation; defects never leak details. */
      const failureMessage = (cause: Cause.Cause<unknown>): string => {
        const error = Cause.findErrorOption(cause)
        if (Option.isSome(error) && error.value instanceof TaskFailure) return error.value.message
        return "internal error while running the operation"
      }

      /**
       * Marks the operation failed and, once the row really moved to failed, emits `operation.failed` — in one
       * transaction, so the failure is never stored without its event (webhook deliveries are rows written by
       * the listener) nor the event sent for a row that a cancel settled first.
       */
      const fail = (operation: OperationRecord, message: string) =>
        Effect.flatMap(store.fail(operation.id, message), (settled) =>
          settled
            ? events.emit(operation.bankId, "operation.failed", {
              operation_id: operation.id,
              parent_operation_id: operation.parentId,
              task_type: operation.taskType,
              status: "failed",
              error_message: message,
              attempts: operation.attempts
            }, `operation.failed:${operation.id}:${operation.attempts}`)
            : Effect.void).pipe(
            sql.withTransaction,
            Effect.catchTag("SqlError", (error) => Effect.logError("could not record the operation's failure", error))
          )

      const runOperation = (bankId: string, operation: OperationRecord) =>
        Effect.gen(function*() {
          const handler = yield* registry.get(operation.taskType)
          if (handler === undefined) {
            yield* fail(operation, `no handler is registered for task type '${operation.taskType}'`)
            return
          }
          const attempt = Effect.suspend(() => handler(operation)).pipe(
            Effect.retry({
              schedule: Schedule.exponential(config.operationRetryBase),
              times: Math.max(0, config.operationMaxAttempts - 1),
              while: (error: TaskFailure) => error.retryable
            })
          )
          const exit = yield* Effect.exit(breaker.execute(attempt, { key: bankId }))
          if (Exit.isSuccess(exit)) {
            yield* store.complete(operation.id, exit.value ?? null)
            return
          }
          const error = Cause.findErrorOption(exit.cause)
          if (Option.isSome(error) && error.value instanceof CircuitBreaker.CircuitBreakerError) {
            yield* store.release(operation.id)
            return
          }
          if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
          if (Cause.hasDies(exit.cause)) yield* Effect.logError("operation crashed", exit.cause)
          yield* fail(operation, failureMessage(exit.cause))
        }).pipe(
          // Shutdown or cancel: give the row back unless a cancel already settled it.
          Effect.onInterrupt(() => store.release(operation.id)),
          Effect.annotateLogs({ bankId, operationId: operation.id, taskType: operation.taskType }),
          // Each run is a trace of its own, linked to the request that queued it.
          Effect.withSpan(`Operation.${operation.taskType}`, {
            root: true,
            kind: "consumer",
            links: linkToQueuer(operation.traceParent),
            attributes: {
              bankId,
              "engram.operation.id": operation.id,
              "engram.operation.type": operation.taskType,
              "engram.operation.attempt": operation.attempts
            }
          }),
          Effect.withTracerEnabled(true)
        )

      const waitForWork = (actor: Actor, timeout: Duration.Duration) =>
        Queue.take(actor.wakeups).pipe(Effect.timeoutOption(timeout))

      const loop = (bankId: string, actor: Actor): Effect.Effect<void> =>
        Effect.gen(function*() {
          while (true) {
            // An open circuit holds the bank's work (it stays pending) until the breaker lets a probe through;
            // the store reports Open with no time left until the next call moves it to half-open.
            const circuit = yield* circuitState(bankId)
            if (circuit._tag === "Open" && Duration.toMillis(circuit.retryAfter) > 0) {
              yield* Effect.sleep(circuit.retryAfter)
              continue
            }
            yield* Queue.clear(actor.wakeups)
            // Each operation is a slice of background work: it starts in a lull between requests (or after the
            // longest wait), so requests are not queued behind it for the database session and the thread.
            yield* foreground.yieldToRequests
            const next = yield* store.claimNext(bankId)
            if (Option.isNone(next)) {
              const woke = yield* waitForWork(actor, config.actorIdleTimeout)
              if (Option.isSome(woke)) continue
              const passivated = yield* lock.withPermit(Effect.sync(() => {
                if (Queue.sizeUnsafe(actor.wakeups) > 0) return false
                actors.delete(bankId)
                return true
              }))
              // The bank's brain stays: reads are the bank's work too, and the brain is released when they stop
              // (`BankBrains`' idle sweep). Dropping it here left a bank that is only read without its brain every
              // few minutes, and its next recall rebuilt it from SQL behind whatever held the database.
              if (passivated) return
              continue
            }
            const together = yield* registry.runsTogether(next.value.taskType)
            const alongside = together !== undefined && together.admits(next.value)
              ? yield* store.claimFollowing(next.value, together)
              : []
            actor.current = yield* Effect.forEach([next.value, ...alongside], (operation) =>
              Effect.map(Effect.forkChild(runOperation(bankId, operation)), (fiber) => ({
                operationId: operation.id,
                fiber
              })))
            yield* Fiber.awaitAll(actor.current.map((running) =>
              running.fiber
            ))
            actor.current = []
          }
        }).pipe(
          Effect.onExit(() => Effect.sync(() => actors.get(bankId) === actor && actors.delete(bankId))),
          Effect.annotateLogs({ bankId })
        )

      const wake = (bankId: string) =>
        lock.withPermit(Effect.gen(function*() {
          const existing = actors.get(bankId)
          if (existing) {
            Queue.offerUnsafe(existing.wakeups, undefined)
            return
          }
          const actor: Actor = { wakeups: yield* Queue.sliding<void>(1), current: [] }
          actors.set(bankId, actor)
          // The actor outlives the request that woke it: its bookkeeping (claims, idle waits) is not traced, or
          // it would all land in that request's trace; each operation it runs starts a trace of its own.
          actor.loop = yield* Effect.forkIn(loop(bankId, actor).pipe(Effect.withTracerEnabled(false)), scope)
        }))

      const stop = (bankId: string) =>
        Effect.suspend(() => {
          const loopFiber = actors.get(bankId)?.loop
          return loopFiber === undefined ? Effect.void : Fiber.interrupt(loopFiber)
        })

      const interrupt = (operationId: string) =>
        Effect.gen(function*() {
          for (const actor of actors.values()) {
            for (const running of actor.current) {
              if (running.operationId === operationId) yield* Fiber.interrupt(running.fiber)
            }
          }
        })

      const status = (bankId: string) =>
        Effect.gen(function*() {
          const actor = actors.get(bankId)
          const circuit = yield* circuitState(bankId)
          return {
            active: actor !== undefined,
            currentOperationId: actor?.current[0]?.operationId ?? null,
            circuit: circuit._tag === "Open"
              ? "open" as const
              : circuit._tag === "HalfOpen"
              ? "half_open" as const
              : "closed" as const,
            retryAfterMs: circuit._tag === "Open" ? Duration.toMillis(circuit.retryAfter) : null
          }
        })

      // Work a dead process left running goes back to pending now, before anything can wake an actor: a layer
      // built later may queue and wake at once (re-embedding after a model change does), and a recovery run after
      // its actor had claimed the operation gave the running operation back, so it ran a second time and its first
      // result was lost. On a cluster runner the shards' owners re-queue orphaned work instead (ClusterBankActors),
      // and the database is shared: another runner's running operations are not ours to reset.
      if (config.cluster.mode === "off") {
        const recovered = yield* store.recoverInterrupted
        if (recovered.length > 0) yield* Effect.logInfo("re-queued operations interrupted by a restart", recovered)
      }

      const start = Effect.gen(function*() {
        const pending = yield* store.banksWithPendingWork
        yield* Effect.forEach(pending, wake, { discard: true })
      })

      return BankActors.of({
        wake,
        interrupt,
        status,
        stop,
        activeCount: Effect.sync(() => actors.size),
        start
      })
    })
  )
}

/**
 * The service's time-sliced scheduler: a turn runs the queued tasks for at most its budget and lets Node poll before
 * the rest, probes run first, lanes (banks) take turns, and tasks of one lane keep their order — what keeps `/health`
 * and a quiet bank answering while fifty clients keep other banks busy.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Scheduler } from "effect"
import { makeTimeSlicedScheduler } from "../../../layers/runtime/TimeSlicedScheduler.ts"
import { HoldsDatabaseSession } from "../../../src/storage/SessionHolder.ts"

const busyFor = (millis: number) => {
  const until = performance.now() + millis
  while (performance.now() < until) {
    // Busy on purpose: a synchronous slice of work the scheduler cannot cut.
  }
}

/** Twenty fibers, each `slices` slices of 1 ms that yield between them; `onSlice` counts them. */
const forkBusyFibers = (slices: number, onSlice: () => void) =>
  Effect.forEach(Array.from({ length: 20 }), () =>
    Effect.forkChild(Effect.gen(function*() {
      for (let slice = 0; slice < slices; slice++) {
        busyFor(1)
        onSlice()
        yield* Effect.yieldNow
      }
    })))

/**
 * Resolves in the next check phase of Node's loop, just after the turn queued before it: one call, one turn (and a
 * poll of the sockets between two calls).
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("TimeSlicedScheduler", () => {
  it("runs a turn's tasks for at most its budget, then lets the event loop come round", async () => {
    const dispatcher = makeTimeSlicedScheduler(10).makeDispatcher()
    const ran: Array<number> = []
    for (let task = 0; task < 10; task++) {
      dispatcher.scheduleTask(() => {
        busyFor(4)
        ran.push(task)
      }, 0)
    }
    let loops = 0
    while (ran.length < 10 && loops < 100) {
      await nextTurn()
      loops++
    }
    assert.deepStrictEqual(ran, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    // Three 4 ms tasks pass a 10 ms budget: ten tasks need at least four turns (Effect's default runs all in one).
    assert.isAtLeast(loops, 4)
  })

  it("runs a lower priority number first, and a turn never runs a task queued during it at the same priority", async () => {
    const dispatcher = makeTimeSlicedScheduler(1_000).makeDispatcher()
    const ran: Array<string> = []
    dispatcher.scheduleTask(() => {
      ran.push("a")
      dispatcher.scheduleTask(() => ran.push("queued by a"), 0)
    }, 0)
    dispatcher.scheduleTask(() => ran.push("b"), 0)
    dispatcher.scheduleTask(() => ran.push("probe"), -1)
    await nextTurn()
    assert.deepStrictEqual(ran, ["probe", "a", "b"])
    await nextTurn()
    assert.deepStrictEqual(ran, ["probe", "a", "b", "queued by a"])
  })

  it("runs one turn per loop even when the turn's tasks queue more (Node polls between any two turns)", async () => {
    const dispatcher = makeTimeSlicedScheduler(1_000).makeDispatcher()
    const ran: Array<number> = []
    const step = (n: number) => () => {
      ran.push(n)
      if (n < 5) dispatcher.scheduleTask(step(n + 1), 0)
    }
    dispatcher.scheduleTask(step(1), 0)
    for (let turn = 1; turn <= 5; turn++) {
      await nextTurn()
      assert.deepStrictEqual(ran, Array.from({ length: turn }, (_, i) => i + 1), `after turn ${turn}`)
    }
  })

  it("serves lanes round-robin: a bank's one task waits for one task of the busy bank, not for all of them", async () => {
    const service = makeTimeSlicedScheduler(1_000)
    const busyBank = service.lane("bank:a").makeDispatcher()
    const quietBank = service.lane("bank:b").makeDispatcher()
    const ran: Array<string> = []
    for (let task = 0; task < 10; task++) busyBank.scheduleTask(() => ran.push(`a${task}`), 0)
    quietBank.scheduleTask(() => ran.push("b"), 0)
    await nextTurn()
    assert.deepStrictEqual(ran.slice(0, 3), ["a0", "b", "a1"])
    assert.strictEqual(ran.length, 11)
  })

  it("is every fiber's scheduler once provided: a probe arriving while fibers are busy runs before their next slices", async () => {
    let slices = 0
    const program = Effect.gen(function*() {
      const fibers = yield* forkBusyFibers(10, () => slices++)
      const context = yield* Effect.context<never>()
      // A request arrives from outside the queue (Node's poll phase; a timer here), as a new root fiber.
      const waited = yield* Effect.callback<number>((resume) => {
        setTimeout(() => {
          const before = slices
          Effect.runForkWith(context)(
            Effect.yieldNowWith(-1).pipe(Effect.andThen(Effect.sync(() => resume(Effect.succeed(slices - before)))))
          )
        }, 3)
      })
      yield* Fiber.joinAll(fibers)
      return waited
    })
    const waited = await Effect.runPromise(
      program.pipe(Effect.provideService(Scheduler.Scheduler, makeTimeSlicedScheduler(5)))
    )
    // With Effect's default scheduler the probe waits behind every busy fiber's queued slice (20 here).
    assert.strictEqual(waited, 0)
    assert.strictEqual(slices, 200)
  })

  it("runs the next slice of a fiber holding a database session first when a reply resumes it; others wait in lane", async () => {
    let slices = 0
    /** Busy slices that ran between a fiber's resumption by a reply (a timer here) and its next slice. */
    const waitAfterReply = Effect.gen(function*() {
      let resumedAt = 0
      const reply = Effect.callback<void>((resume) => {
        setTimeout(() => {
          resumedAt = slices
          resume(Effect.void)
        }, 3)
      })
      // The first resumption of a fiber that started inside a turn runs on the spot; the next ones yield.
      yield* reply
      yield* reply
      return slices - resumedAt
    })
    const program = Effect.gen(function*() {
      const fibers = yield* forkBusyFibers(20, () => slices++)
      const [holder, other] = yield* Effect.all([
        waitAfterReply.pipe(Effect.provideService(HoldsDatabaseSession, true)),
        waitAfterReply
      ], { concurrency: "unbounded" })
      yield* Fiber.joinAll(fibers)
      return { holder, other }
    })
    const waited = await Effect.runPromise(
      program.pipe(Effect.provideService(Scheduler.Scheduler, makeTimeSlicedScheduler(5)))
    )
    // The holder's next statement goes out before any queued slice; the other fiber waits behind the lane's tasks.
    assert.strictEqual(waited.holder, 0)
    assert.isAtLeast(waited.other, 10)
  })
})

/**
 * The service's Effect scheduler: turns of the event loop with a time budget, shared fairly between lanes (one per
 * bank, one for the rest of the service), probes first.
 *
 * Effect's default gives each fiber its own dispatcher and Node runs every dispatcher queued before its check phase
 * in one go, and a fiber woken by a promise or a socket runs its whole slice on the spot: with fifty busy clients one
 * stretch of the loop lasted 100–500 ms, and a request that just arrived, however small (`/health`), waited for all
 * of it (`bench/isolation.ts` phase 9). Here
 * - a turn runs queued tasks for at most `budgetMillis`, then lets Node poll its sockets;
 * - the probes' tasks (lane `probes`, src/http/RequestLanes.ts) and any with a negative priority run first, and so
 *   does the next slice of a fiber that holds a database connection for a transaction (src/storage/SessionHolder.ts)
 *   when a reply resumes it: on the embedded tier every other statement waits while it holds the one session;
 * - the others run round-robin between lanes, one task of each lane at a time, so a bank's requests wait for one
 *   slice of each other busy bank, not for every request queued before them: a bank is an actor with its share;
 * - within a lane, tasks keep their order, and a task queued during a turn waits for the next (a fiber that yields
 *   lets the others run).
 */
import { Fiber, Scheduler } from "effect"
import { PROBES_LANE, SERVICE_LANE } from "../../src/http/RequestLanes.ts"
import { HoldsDatabaseSession } from "../../src/storage/SessionHolder.ts"

/** The queue of one lane, consumed from the front without shifting. */
class Lane implements Scheduler.SchedulerDispatcher {
  tasks: Array<() => void> = []
  next = 0
  /** In the ring of lanes with tasks (or in the running turn's). */
  queued = false
  private readonly turns: Turns
  readonly key: string
  /** The probes' lane: its tasks run before every other lane's, at any priority. */
  readonly urgent: boolean

  constructor(turns: Turns, key: string) {
    this.turns = turns
    this.key = key
    this.urgent = key === PROBES_LANE
  }

  get waiting(): number {
    return this.tasks.length - this.next
  }

  scheduleTask(task: () => void, priority: number): void {
    this.turns.schedule(this, task, this.turns.takeResumedHolder() ? -1 : priority)
  }

  flush(): void {
    this.turns.flush()
  }

  /** Drops what has run, so a lane that never empties does not grow without bound. */
  compact() {
    if (this.next >= this.tasks.length) {
      this.tasks = []
      this.next = 0
    } else if (this.next > 1024) {
      this.tasks = this.tasks.slice(this.next)
      this.next = 0
    }
  }
}

class Turns {
  /** The probes' tasks (and any with a negative priority), before any lane's. */
  private urgent: Array<() => void> = []
  /** Lanes with tasks, in the order the next turn serves them. */
  private ring: Array<Lane> = []
  private scheduled = false
  inTurn = false
  deadline = 0
  /**
   * A fiber holding a database session that was just resumed outside a turn and is about to yield: its next task is
   * queued with the probes'. Kept as the fiber so that only that fiber's own yield, the next schedule, takes it.
   */
  resumedHolder: Fiber.Fiber<unknown, unknown> | undefined = undefined
  private readonly budgetMillis: number
  private readonly onIdle: (lane: Lane) => void

  constructor(budgetMillis: number, onIdle: (lane: Lane) => void) {
    this.budgetMillis = budgetMillis
    this.onIdle = onIdle
  }

  schedule(lane: Lane, task: () => void, priority: number) {
    if (priority < 0 || lane.urgent) {
      this.urgent.push(task)
    } else {
      lane.tasks.push(task)
      if (!lane.queued) {
        lane.queued = true
        this.ring.push(lane)
      }
    }
    this.scheduleTurn()
  }

  takeResumedHolder(): boolean {
    const holder = this.resumedHolder
    if (holder === undefined) return false
    this.resumedHolder = undefined
    return holder === Fiber.getCurrent()
  }

  /** At most one turn is ever waiting: a second would run right after the first, with no poll of the sockets between. */
  private scheduleTurn() {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.runTurn)
  }

  flush() {
    while (this.urgent.length > 0 || this.ring.length > 0) {
      const urgent = this.urgent
      this.urgent = []
      for (const task of urgent) task()
      const ring = this.ring
      this.ring = []
      for (const lane of ring) {
        while (lane.next < lane.tasks.length) lane.tasks[lane.next++]!()
        this.settle(lane)
      }
    }
  }

  private readonly runTurn = () => {
    this.scheduled = false
    this.inTurn = true
    this.deadline = performance.now() + this.budgetMillis
    const urgent = this.urgent
    this.urgent = []
    for (const task of urgent) task()
    // Each lane runs what it held when the turn began, one task at a time in turn with the others.
    const ring = this.ring
    this.ring = []
    const ends = ring.map((lane) => lane.tasks.length)
    let stoppedAt = ring.length
    let ran = true
    serve: while (ran) {
      ran = false
      for (let at = 0; at < ring.length; at++) {
        const lane = ring[at]!
        if (lane.next >= ends[at]!) continue
        lane.tasks[lane.next++]!()
        ran = true
        if (performance.now() >= this.deadline) {
          stoppedAt = at + 1
          break serve
        }
      }
    }
    this.inTurn = false
    // The next turn starts with the lanes this one did not reach, then those it served, then lanes new since.
    const activated = this.ring
    this.ring = []
    for (const lane of [...ring.slice(stoppedAt), ...ring.slice(0, stoppedAt)]) this.settle(lane)
    this.ring.push(...activated)
    if (this.urgent.length > 0 || this.ring.length > 0) this.scheduleTurn()
  }

  private settle(lane: Lane) {
    lane.compact()
    if (lane.waiting > 0) {
      this.ring.push(lane)
    } else {
      lane.queued = false
      this.onIdle(lane)
    }
  }
}

/** What every scheduler of the service shares: the turns, the lanes and the rule for yielding. */
class Service {
  readonly turns: Turns
  private readonly lanes = new Map<string, LaneScheduler>()
  /** Fibers that have run once: a later run that starts outside a turn is a resume. */
  private readonly started = new WeakSet<Fiber.Fiber<unknown, unknown>>()

  constructor(budgetMillis: number) {
    // A lane with nothing queued is forgotten (fibers holding it keep using it): one entry per busy bank, no more.
    this.turns = new Turns(budgetMillis, (lane) => {
      if (lane.key !== SERVICE_LANE && this.lanes.get(lane.key)?.dispatcher === lane) this.lanes.delete(lane.key)
    })
  }

  lane(key: string): LaneScheduler {
    let scheduler = this.lanes.get(key)
    if (scheduler === undefined) {
      scheduler = new LaneScheduler(this, new Lane(this.turns, key))
      this.lanes.set(key, scheduler)
    }
    return scheduler
  }

  /**
   * Besides Effect's own rule (a slice of at most `maxOpsBeforeYield` operations), a fiber yields
   * - inside a turn, once the turn's budget is spent (read every 64 operations: the clock costs ~30 ns);
   * - outside a turn, as soon as it is resumed: a fiber woken by a promise, a socket or a timer would otherwise run
   *   its whole slice right there, and a microtask queue of resumed recalls held the loop 100–150 ms (phase 9,
   *   `--cpu-prof`). Its first run is left alone: a request's fiber starts in Node's poll phase and reaches the
   *   middleware that queues it in its lane at its priority within a few operations. A resumed fiber that holds a
   *   database session for a transaction yields too, but its next slice runs first (`Turns.resumedHolder`); a slice
   *   that spends the budget goes back to its lane as any other, so a transaction's computing stays fair.
   */
  shouldYield(fiber: Fiber.Fiber<unknown, unknown>): boolean {
    const ops = fiber.currentOpCount
    if (ops >= fiber.cache.maxOpsBeforeYield) return true
    if (this.turns.inTurn) return (ops & 63) === 0 && performance.now() >= this.turns.deadline
    if (ops !== 1) return false
    if (this.started.has(fiber)) {
      if (fiber.getRef(HoldsDatabaseSession)) this.turns.resumedHolder = fiber
      return true
    }
    this.started.add(fiber)
    return false
  }
}

/** The scheduler of the fibers of one lane; `lane(key)` gives another lane's (src/http/RequestLanes.ts). */
export class LaneScheduler implements Scheduler.Scheduler {
  readonly executionMode = "async" as const
  private readonly service: Service
  readonly dispatcher: Lane

  constructor(service: Service, dispatcher: Lane) {
    this.service = service
    this.dispatcher = dispatcher
  }

  shouldYield(fiber: Fiber.Fiber<unknown, unknown>): boolean {
    return this.service.shouldYield(fiber)
  }

  /** Every fiber of the lane shares its dispatcher: the budget is the turn's, not each fiber's. */
  makeDispatcher(): Scheduler.SchedulerDispatcher {
    return this.dispatcher
  }

  lane(key: string): Scheduler.Scheduler {
    return this.service.lane(key)
  }
}

/** The service's scheduler: its fibers run in the lane `service` until a request moves them to its bank's. */
export const makeTimeSlicedScheduler = (budgetMillis: number): LaneScheduler =>
  new Service(budgetMillis).lane(SERVICE_LANE)

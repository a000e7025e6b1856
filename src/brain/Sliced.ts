/**
 * Long synchronous work on the brain (a build's last passes, compaction, a `.brain` file's encoding) written as a
 * generator that `yield`s between bounded steps, so it can run in slices that give the event loop a turn between
 * them — at 100k memories each of these held the thread for 0.4–3 s in one piece, and every request of every bank
 * waited. `runSliced` runs it that way; `runWhole` runs it at once (tests, small banks, callers already off the
 * request path).
 */
import { Effect } from "effect"

/** Work that yields now and then, returning `A` at the end. */
export type Sliced<A> = Generator<void, A, void>

/** Runs the work to its end without pausing. */
export const runWhole = <A>(work: Sliced<A>): A => {
  let step = work.next()
  while (step.done !== true) step = work.next()
  return step.value
}

/**
 * Runs the work in slices of about `sliceMillis`, running `pause` between slices (a turn of the event loop, or a
 * wait for a lull in requests).
 */
export const runSliced = <A, R>(
  work: Sliced<A>,
  pause: Effect.Effect<void, never, R>,
  sliceMillis = 8
): Effect.Effect<A, never, R> =>
  Effect.gen(function*() {
    let sliceStart = performance.now()
    let step = work.next()
    while (step.done !== true) {
      if (performance.now() - sliceStart >= sliceMillis) {
        yield* pause
        sliceStart = performance.now()
      }
      step = work.next()
    }
    return step.value
  })

/**
 * A countdown for generators: `tick(n)` is true every `every` units of work, where a generator `yield`s. Cheaper than
 * reading the clock per item in a tight loop.
 */
export const every = (units: number) => {
  let left = units
  return (count = 1): boolean => {
    left -= count
    if (left > 0) return false
    left = units
    return true
  }
}

/** `runSliced` for work that may throw: what it throws becomes the failure `onThrow` makes of it. */
export const runSlicedOrFail = <A, E, R>(
  work: Sliced<A>,
  pause: Effect.Effect<void, never, R>,
  onThrow: (thrown: unknown) => E,
  sliceMillis = 8
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    let sliceStart = performance.now()
    const step = () => {
      try {
        return { next: work.next() } as const
      } catch (thrown) {
        return { thrown } as const
      }
    }
    let current = step()
    while (true) {
      if ("thrown" in current) return yield* Effect.fail(onThrow(current.thrown))
      if (current.next.done === true) return current.next.value
      if (performance.now() - sliceStart >= sliceMillis) {
        yield* pause
        sliceStart = performance.now()
      }
      current = step()
    }
  })

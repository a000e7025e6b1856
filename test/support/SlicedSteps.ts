/** Runs sliced work (`src/brain/Sliced.ts`) to its end, counting the points where it offered to pause. */
import type { Sliced } from "../../src/brain/Sliced.ts"

export const stepsOf = <A>(work: Sliced<A>): { readonly pauses: number; readonly value: A } => {
  let pauses = 0
  let step = work.next()
  while (step.done !== true) {
    pauses++
    step = work.next()
  }
  return { pauses, value: step.value }
}

/**
 * Lets V8 give an idle server's garbage back. V8's memory reducer runs a memory-reducing, incremental major GC once
 * the main thread's allocation rate turns low after a burst; on Node 24 (V8 13.6) it never sees a low rate in a
 * process that allocates nothing on the C++ (cppgc) heap: that rate is then exactly 0, which the reducer's test
 * reads as the highest rate (V8 CL 5935313; nodejs/node#66564), so only its 100 s watchdog, postponed by every
 * major GC, ever reduces. A fresh server kept 45 MiB of start-up garbage and 40 MiB of empty heap pages for good
 * (heap 148 MiB used of 170, 103 after a reducing GC: `node bench/memory.ts --detail`). Compiling a `vm.Script` is
 * the one thing Node core allocates on that heap: one tiny script every 30 s keeps the rate positive and
 * near zero, so the reducer works as V8 intends — incrementally, while nothing else runs — and never delays a request.
 */
import { Effect, Layer } from "effect"
import { Script } from "node:vm"

/** Under the ~104 s after which the reducer's decayed rate underflows back to exactly 0. */
const NUDGE_MILLIS = 30_000

/** A few bytes on the C++ heap: the smallest allocation Node lets JavaScript make there. */
const nudge = () => void new Script("0", { filename: "engram-idle-heap-release" })

export const IdleHeapReleaseLive: Layer.Layer<never> = Layer.effectDiscard(Effect.acquireRelease(
  Effect.sync(() => {
    nudge()
    const timer = setInterval(nudge, NUDGE_MILLIS)
    // Never what keeps the process alive.
    timer.unref()
    return timer
  }),
  (timer) => Effect.sync(() => clearInterval(timer))
))

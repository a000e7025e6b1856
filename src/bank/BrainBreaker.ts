/**
 * The circuit breaker of one bank's brain, and the counters its status reports. Closed: builds run; a run of
 * `failures` failed builds opens it. Open: recall answers from SQL and no build is tried until `coolDownMillis`
 * has passed; then it is half-open and the next read tries one build — success closes it (and clears the count),
 * failure opens it again for another cool-down. Plain state driven by the caller's clock: no timers.
 */
import { Context } from "effect"

export type BreakerState = "closed" | "open" | "half_open"

export interface BrainStats {
  /** Full builds from SQL that succeeded. */
  builds: number
  buildFailures: number
  /** Writes applied to a loaded brain as a delta. */
  incrementalUpdates: number
  compactions: number
  /** Brains installed from an imported `.brain` file without a build. */
  imports: number
  /** Reads of the brain, and those of them that found none loaded and had to build it first. */
  reads: number
  coldReads: number
  /** Reads answered from SQL because the breaker was open or the build failed. */
  sqlFallbacks: number
  lastBuildMillis: number | null
  lastBuiltAt: number | null
}

export const emptyStats = (): BrainStats => ({
  builds: 0,
  buildFailures: 0,
  incrementalUpdates: 0,
  compactions: 0,
  imports: 0,
  reads: 0,
  coldReads: 0,
  sqlFallbacks: 0,
  lastBuildMillis: null,
  lastBuiltAt: null
})

export class BrainBreaker {
  /** Failed builds since the last success. */
  failureCount = 0
  private openedAt: number | null = null

  private readonly failures: number
  private readonly coolDownMillis: number

  constructor(failures: number, coolDownMillis: number) {
    this.failures = failures
    this.coolDownMillis = coolDownMillis
  }

  state(now: number): BreakerState {
    if (this.openedAt === null) return "closed"
    return now - this.openedAt >= this.coolDownMillis ? "half_open" : "open"
  }

  /** Whether a build may be tried now (closed, or half-open for its one trial). */
  allows(now: number): boolean {
    return this.state(now) !== "open"
  }

  succeeded(): void {
    this.failureCount = 0
    this.openedAt = null
  }

  failed(now: number): void {
    this.failureCount++
    // A failed trial while half-open re-opens at once; otherwise the count decides.
    if (this.openedAt !== null || this.failureCount >= this.failures) this.openedAt = now
  }
}

/**
 * A test seam: when `failBuild(bankId)` is true, the bank's next brain build fails as a database error would.
 * The default never fails; tests provide their own to drive the breaker through its states.
 */
export const BrainFaults = Context.Reference<{ readonly failBuild: (bankId: string) => boolean }>(
  "engram/bank/BrainFaults",
  { defaultValue: () => ({ failBuild: () => false }) }
)

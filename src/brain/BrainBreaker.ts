/**
 * The circuit breaker of one bank's brain, and the counters its status reports. Closed: builds run; a run of
 * `failures` failed builds opens it. Open: recall answers from SQL and no build is tried until `coolDownMillis`
 * has passed; then it is half-open and admits exactly one trial build — reads arriving while it runs are answered
 * from SQL, not queued behind it; success closes the breaker (and clears the count), failure opens it again for
 * another cool-down. Plain state driven by the caller's clock: no timers.
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
  /** Cold reads answered by loading the bank's kept `.brain` file (then catching up) instead of a build. */
  fileLoads: number
  /** HNSW indexes built for the bank's vectors, and those read back with its kept file instead. */
  indexBuilds: number
  indexLoads: number
  /** Of the builds, those made on the index worker; and the points added on the event loop (slices of 16). */
  indexWorkerBuilds: number
  indexPointsAddedInline: number
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
  fileLoads: 0,
  indexBuilds: 0,
  indexLoads: 0,
  indexWorkerBuilds: 0,
  indexPointsAddedInline: 0,
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
  /** A half-open breaker's one trial build is running. */
  private trialRunning = false

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

  /**
   * Whether a build may be tried now: always while closed, never while open, and once while half-open — the
   * caller that is admitted then owns the trial and must report `succeeded`, `failed` or `abandoned`.
   */
  admit(now: number): boolean {
    const state = this.state(now)
    if (state === "closed") return true
    if (state === "open" || this.trialRunning) return false
    this.trialRunning = true
    return true
  }

  succeeded(): void {
    this.failureCount = 0
    this.openedAt = null
    this.trialRunning = false
  }

  /** The build was interrupted: it proved nothing, and the next read may try again. */
  abandoned(): void {
    this.trialRunning = false
  }

  failed(now: number): void {
    this.trialRunning = false
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
  "engram/brain/BrainFaults",
  { defaultValue: () => ({ failBuild: () => false }) }
)

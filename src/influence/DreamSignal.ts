/**
 * The influence leaderboard's `dream` factor: how much the bank's dream runs in the window drew on each memory
 * (`dreamSignalByMemory`: the quality of the runs that used it as evidence and the confidence of the predictions it
 * supports, scaled so the strongest memory has 1), with the number of runs and their mean quality for the summary.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dreamSignalByMemory } from "../dreams/DreamSignal.ts"

export interface DreamSignal {
  /** Per memory id, in [0, 1]. */
  readonly byItem: ReadonlyMap<string, number>
  readonly runs: number
  readonly averageQuality: number
}

export const dreamSignal = (bankId: string, since: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byItem = yield* dreamSignalByMemory(bankId, since)
    const [summary] = yield* sql<{ runs: number; averageQuality: number | null }>`
      SELECT count(*)::int AS runs, avg(quality_score)::float8 AS average_quality FROM dream_runs
      WHERE bank_id = ${bankId} AND created_at >= ${since}`.pipe(Effect.orDie)
    return {
      byItem,
      runs: summary?.runs ?? 0,
      averageQuality: Number((summary?.averageQuality ?? 0).toFixed(4))
    } satisfies DreamSignal
  })

/**
 * Waits for background operations and shows how far they have got, from GET operations/{id} (`progress`
 * {done, total}: recorded by the task, or a batch's completed sub-batches). On a terminal a bar redrawn in place
 * on stderr; `plain` prints a line whenever the numbers change (for logs and non-TTYs); `none` stays silent.
 * The poll sleeps between requests and ends when every operation has settled.
 */
import { Console, Duration, Effect } from "effect"
import { Flag } from "effect/cli"
import { CliFailure } from "./CliFailure.ts"
import { bankPath, EngramClient } from "./EngramClient.ts"

export type ProgressMode = "auto" | "bar" | "plain" | "none"

export const progressFlag = Flag.Literals("progress", ["auto", "bar", "plain", "none"]).pipe(
  Flag.withDescription(
    "how to show progress on stderr: bar (a terminal), plain (a line per change), none; auto = bar on a TTY, else plain"
  ),
  Flag.withDefault("auto" as const)
)

export const waitFlag = Flag.Boolean("no-wait").pipe(
  Flag.withDescription("print the queued operation ids and return at once instead of waiting for them"),
  Flag.withDefault(false)
)

const terminal = new Set(["completed", "failed", "cancelled", "not_found"])

interface Detail {
  readonly operation_id: string
  readonly status: string
  readonly task_type: string | null
  readonly items_count: number
  readonly error_message: string | null
  readonly stage?: string | null
  readonly progress?: { readonly done: number; readonly total: number } | null
}

/** How much of one operation is done, in its own unit (items for retain batches, steps for others). */
export const progressOf = (detail: Detail): { done: number; total: number } => {
  const total = detail.progress?.total ?? Math.max(detail.items_count, 1)
  if (detail.status === "completed") return { done: Math.max(total, detail.progress?.done ?? 0), total }
  return { done: detail.progress?.done ?? 0, total }
}

const resolveMode = (mode: ProgressMode): Exclude<ProgressMode, "auto"> =>
  mode === "auto" ? (process.stderr.isTTY ? "bar" : "plain") : mode

const bar = (fraction: number, width = 30) => {
  const filled = Math.round(fraction * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

const summary = (details: ReadonlyArray<Detail>) => {
  const counts = new Map<string, number>()
  for (const detail of details) counts.set(detail.status, (counts.get(detail.status) ?? 0) + 1)
  return [...counts].map(([status, count]) => details.length === 1 ? status : `${count} ${status}`).join(", ")
}

/**
 * Polls the operations until all have settled and returns their final details. Fails (exit 1) when any ended
 * failed, cancelled or unknown, naming each with its error message.
 */
export const watchOperations = (
  bankId: string,
  operationIds: ReadonlyArray<string>,
  options: { readonly label: string; readonly unit?: string; readonly mode: ProgressMode }
) =>
  Effect.gen(function*() {
    const client = yield* EngramClient
    const mode = resolveMode(options.mode)
    let last = ""
    let delay = Duration.millis(100)
    while (true) {
      const details: ReadonlyArray<Detail> = yield* Effect.forEach(
        operationIds,
        (id) => client.json("GET", bankPath(bankId, "operations", id)),
        { concurrency: 4 }
      )
      const parts = details.map(progressOf)
      const done = parts.reduce((sum, part) => sum + part.done, 0)
      const total = parts.reduce((sum, part) => sum + part.total, 0)
      const percent = total === 0 ? 100 : Math.floor((done / total) * 100)
      const settled = details.every((detail) => terminal.has(detail.status))
      const stage = details.length === 1 && details[0]?.stage ? ` ${details[0].stage}` : ""
      // Batches count items; other tasks count whatever steps they record.
      const unit = options.unit ?? (details.every((detail) => detail.task_type === "batch_retain") ? "items" : "steps")
      const text = `${options.label}: ${done}/${total} ${unit} (${percent}%) ${summary(details)}${stage}`
      if (text !== last) {
        if (mode === "plain") yield* Console.error(`progress ${text}`)
        if (mode === "bar") {
          yield* Effect.sync(() => process.stderr.write(`\r\x1b[2K${bar(total === 0 ? 1 : done / total)} ${text}`))
        }
        last = text
      }
      if (settled) {
        if (mode === "bar") yield* Effect.sync(() => process.stderr.write("\n"))
        const bad = details.filter((detail) => detail.status !== "completed")
        if (bad.length > 0) {
          return yield* CliFailure.failure(
            bad.map((detail) =>
              `operation ${detail.operation_id} ${detail.status}${
                detail.error_message ? `: ${detail.error_message}` : ""
              }`
            ).join("\n")
          )
        }
        return details
      }
      yield* Effect.sleep(delay)
      // Start quick for short operations, then settle at two polls a second.
      delay = Duration.min(Duration.times(delay, 2), Duration.millis(500))
    }
  })

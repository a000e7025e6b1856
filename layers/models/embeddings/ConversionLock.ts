/**
 * A lock file that lets exactly one process (or fiber) do a one-time job such as converting the GloVe table,
 * while the others wait for its result instead of repeating the work. Correctness never depends on it — the
 * result is published by an atomic rename — so a lock left by a dead holder is simply taken over.
 */
import { Clock, Duration, Effect, FileSystem, Option } from "effect"

/** Identifies this process incarnation: a restarted container may reuse the pid, never the start time. */
const owner = `${process.pid}:${Math.round(performance.timeOrigin)}`

const POLL = Duration.millis(250)

/** A lock older than this is abandoned even if its holder looks alive (e.g. a holder on another host). */
const ABANDONED_MILLIS = 10 * 60 * 1000

const isAlive = (pid: number): Effect.Effect<boolean> =>
  Number.isInteger(pid) && pid > 0
    ? Effect.try({ try: () => process.kill(pid, 0), catch: (error) => (error as NodeJS.ErrnoException).code }).pipe(
      Effect.as(true),
      // EPERM: the process exists but belongs to another user.
      Effect.catch((code) => Effect.succeed(code === "EPERM"))
    )
    : Effect.succeed(false)

/** Whether the holder recorded in the lock is gone. */
const isStale = Effect.fnUntraced(function*(lockPath: string) {
  const fs = yield* FileSystem.FileSystem
  const now = yield* Clock.currentTimeMillis
  const holder = yield* fs.readFileString(lockPath).pipe(Effect.orElseSucceed(() => ""))
  const modified = yield* fs.stat(lockPath).pipe(
    Effect.map((info) => Option.match(info.mtime, { onNone: () => now, onSome: (date) => date.getTime() })),
    Effect.orElseSucceed(() => now)
  )
  if (now - modified > ABANDONED_MILLIS) return true
  const [pid, started] = holder.split(":")
  if (pid === undefined || started === undefined) return holder !== "" // being written, or not ours to judge
  if (pid === String(process.pid)) return holder !== owner
  return !(yield* isAlive(Number(pid)))
})

/**
 * Runs `work` holding the lock at `lockPath`, unless `ready` already has a value. While another live holder has
 * the lock, polls `ready` and returns its value as soon as it has one (that holder's result), or takes the lock
 * once the holder is gone.
 */
export const exclusive = <A, E, R, E2, R2>(options: {
  readonly lockPath: string
  readonly work: Effect.Effect<A, E, R>
  readonly ready: Effect.Effect<Option.Option<A>, E2, R2>
}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    while (true) {
      const acquired = yield* fs.writeFileString(options.lockPath, owner, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf((error) => error.reason._tag === "AlreadyExists", () => Effect.succeed(false))
      )
      if (acquired) {
        // The previous holder may have finished just before we got the lock: take its result if there is one.
        return yield* options.ready.pipe(
          Effect.flatMap(Option.match({ onSome: Effect.succeed, onNone: () => options.work })),
          Effect.ensuring(fs.remove(options.lockPath, { force: true }).pipe(Effect.ignore))
        )
      }
      const result = yield* options.ready
      if (Option.isSome(result)) return result.value
      if (yield* isStale(options.lockPath)) {
        yield* Effect.logWarning(`Taking over ${options.lockPath}: its holder is gone`)
        yield* fs.remove(options.lockPath, { force: true }).pipe(Effect.ignore)
        continue
      }
      yield* Effect.sleep(POLL)
    }
  })

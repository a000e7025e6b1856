/**
 * `engram serve`: the service exactly as `npm start` runs it (src/main.ts's program, configured by SERVICE_API_*).
 * The flags only set those variables for this process; the program is loaded on demand so other commands stay light.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"

export const serveCommand = Command.make("serve", {
  host: Flag.String("host").pipe(Flag.withDescription("address to listen on (SERVICE_API_HOST)"), Flag.optional),
  port: Flag.Int("port").pipe(Flag.withDescription("port to listen on (SERVICE_API_PORT)"), Flag.optional),
  dataDir: Flag.String("data-dir").pipe(Flag.withDescription("data directory (SERVICE_API_DATA_DIR)"), Flag.optional)
}, ({ dataDir, host, port }) =>
  Effect.gen(function*() {
    yield* Effect.sync(() => {
      if (Option.isSome(host)) process.env["SERVICE_API_HOST"] = host.value
      if (Option.isSome(port)) process.env["SERVICE_API_PORT"] = String(port.value)
      if (Option.isSome(dataDir)) process.env["SERVICE_API_DATA_DIR"] = dataDir.value
    })
    const { serve } = yield* Effect.promise(() => import("../../main.ts"))
    return yield* serve
  })).pipe(
    Command.withDescription("Run the engram service (same settings as `npm start`); stops on Ctrl-C"),
    Command.withExamples([{ command: "engram serve --port 8888", description: "serve on 127.0.0.1:8888" }])
  )

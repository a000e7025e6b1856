/**
 * `engram` on the command line (`bin/engram.mjs` runs this file). Exit codes: 0 ok, 1 server or operation
 * failure, 2 usage error, 3 the API refused the request (4xx, e.g. an unknown bank) — see CliFailure.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect } from "effect"
import { CliError, Command } from "effect/cli"
import { CliFailure, ExitCode } from "./CliFailure.ts"
import { engramCommand } from "./EngramCommand.ts"
import { serviceTeardown } from "../ServiceExit.ts"

const version = "0.1.0"

/** An unexpected error (e.g. `serve` failing to listen) with its underlying cause, never a stack trace. */
const describe = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const named = current as { _tag?: unknown; message?: unknown; cause?: unknown }
    const text = [
      typeof named._tag === "string" ? named._tag : undefined,
      typeof named.message === "string" ? named.message : undefined
    ]
      .filter((part) => part !== undefined && part !== "").join(": ")
    parts.push(text === "" ? String(current) : text)
    current = named.cause
  }
  return parts.join(" — ")
}

Command.run(engramCommand, { version }).pipe(
  Effect.catch((error): Effect.Effect<never, unknown> => {
    if (error instanceof CliFailure) return Effect.andThen(Console.error(`error: ${error.message}`), Effect.fail(error))
    // The parser has already printed the help and what was wrong with the command line.
    if (CliError.isCliError(error)) {
      return Effect.fail(new CliFailure({ message: error.message, exitCode: ExitCode.usage }))
    }
    return Effect.andThen(Console.error(`error: ${describe(error)}`), Effect.fail(error))
  }),
  Effect.tapDefect((defect) => Console.error(`error: ${describe(defect)}`)),
  Effect.provide(NodeServices.layer),
  // `engram serve` stopped by a signal exits 0 like `npm start`; any other command stopped by Ctrl-C exits 130.
  NodeRuntime.runMain({
    disableErrorReporting: true,
    ...(process.argv.slice(2).includes("serve") ? { teardown: serviceTeardown } : {})
  })
)

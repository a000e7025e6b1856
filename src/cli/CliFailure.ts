/**
 * The one error every CLI command fails with: what to print and the process exit code it means. Exit codes are
 * part of the CLI's contract (docs/cli.md); never exit with a code not listed here.
 */
import { Data, Runtime } from "effect"

export const ExitCode = {
  ok: 0,
  /** The server (or the embedded engine) failed, was unreachable, or an operation ended failed/cancelled. */
  failure: 1,
  /** The command line itself is wrong: unknown command or flag, missing argument, unreadable input file. */
  usage: 2,
  /** The API refused the request with a 4xx: unknown bank or operation, invalid field, conflict. */
  rejected: 3
} as const

export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly message: string
  readonly exitCode: number
}> {
  override get [Runtime.errorExitCode]() {
    return this.exitCode
  }

  static usage(message: string) {
    return new CliFailure({ message, exitCode: ExitCode.usage })
  }

  static failure(message: string) {
    return new CliFailure({ message, exitCode: ExitCode.failure })
  }

  /** An HTTP error answer: 4xx means the request was refused (3), anything else a server failure (1). */
  static fromStatus(status: number, detail: string) {
    return new CliFailure({
      message: `${status}: ${detail}`,
      exitCode: status >= 400 && status < 500 ? ExitCode.rejected : ExitCode.failure
    })
  }
}

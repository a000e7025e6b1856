/** The `engram` command tree: its global flags and every command group. */
import { Command } from "effect/cli"
import { banksCommand } from "./commands/Banks.ts"
import { brainCommand } from "./commands/Brain.ts"
import { codebaseCommand } from "./commands/Codebase.ts"
import { datasetCommand } from "./commands/Dataset.ts"
import { forgetCommand } from "./commands/Forget.ts"
import { operationsCommand } from "./commands/Operations.ts"
import { recallCommand, reflectCommand } from "./commands/Recall.ts"
import { retainCommand } from "./commands/Retain.ts"
import { retentionCommand } from "./commands/Retention.ts"
import { serveCommand } from "./commands/Serve.ts"
import { globalSettings } from "./GlobalSettings.ts"

export const engramCommand = Command.make("engram").pipe(
  Command.withDescription(
    "engram on the command line: talk to a running server (--url, --api-key, SERVICE_API_*) or run the engine " +
      "in-process (--embedded --data-dir D). Exit codes: 0 ok, 1 server/operation failure, 2 usage error, " +
      "3 refused by the API (4xx, e.g. unknown bank)."
  ),
  Command.withSubcommands([
    serveCommand,
    banksCommand,
    retainCommand,
    recallCommand,
    reflectCommand,
    operationsCommand,
    brainCommand,
    codebaseCommand,
    datasetCommand,
    forgetCommand,
    retentionCommand
  ]),
  Command.withGlobalFlags(globalSettings)
)

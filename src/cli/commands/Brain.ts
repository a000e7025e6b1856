/** `engram brain export|import`: a bank's `.brain` file. */
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CliFailure, ExitCode } from "../CliFailure.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { readBytes, writeBytes } from "../LocalFiles.ts"
import { emit, renderPairs } from "../Output.ts"
import { bankIdArgument } from "./Banks.ts"

const exportBrain = Command.make("export", {
  bankId: bankIdArgument,
  out: Flag.File("out").pipe(Flag.withDescription("where to write the file (default <bank-id>.brain)"), Flag.optional),
  mode: Flag.Literals("mode", ["incremental", "full_copy"]).pipe(
    Flag.withDescription("full_copy also carries a bounded copy of the newest memories"),
    Flag.optional
  )
}, ({ bankId, mode, out }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const bytes = yield* client.bytes("GET", bankPath(bankId, "brain", "export"), {
      query: { mode: Option.getOrUndefined(mode) }
    })
    const path = Option.getOrElse(out, () => `${bankId}.brain`)
    yield* writeBytes(path, bytes)
    yield* emit({ bank_id: bankId, path, size_bytes: bytes.length }, () => `wrote ${path} (${bytes.length} bytes)`)
  }))).pipe(Command.withDescription("Write a bank's brain (graph, keyword index, mental models) to a .brain file"))

const importBrain = Command.make("import", {
  bankId: bankIdArgument,
  file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a .brain file")),
  validateOnly: Flag.Boolean("validate-only").pipe(
    Flag.withDescription("only check the file (exit 3 with the reason when it is not valid)"),
    Flag.withDefault(false)
  )
}, ({ bankId, file, validateOnly }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const data = yield* readBytes(file)
    const bytes = { data, contentType: "application/octet-stream" }
    if (validateOnly) {
      const body = yield* client.json("POST", bankPath(bankId, "brain", "import", "validate"), { bytes })
      yield* emit(body, () => renderPairs([["valid", body.valid], ["version", body.version], ["reason", body.reason]]))
      if (!body.valid) return yield* new CliFailure({ message: `${file}: ${body.reason}`, exitCode: ExitCode.rejected })
      return
    }
    const body = yield* client.json("POST", bankPath(bankId, "brain", "import"), { bytes })
    yield* emit(body, () =>
      renderPairs([
        ["bank", body.bank_id],
        ["stored as", body.file_path],
        ["bytes", body.size_bytes],
        ["installed", body.installed],
        ["install reason", body.install_reason]
      ]))
  }))).pipe(
    Command.withDescription("Load a .brain file into a bank (installed at once when it matches the bank's data)")
  )

export const brainCommand = Command.make("brain").pipe(
  Command.withDescription("Export and import a bank's .brain file"),
  Command.withSubcommands([exportBrain, importBrain])
)

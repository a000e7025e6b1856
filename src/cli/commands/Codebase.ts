/** `engram codebase import`: a repository as a reviewable snapshot, from a zip, one file, or a git host. */
import { Effect, Option, Path } from "effect"
import { Command, Flag } from "effect/cli"
import { CliFailure } from "../CliFailure.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { readBytes } from "../LocalFiles.ts"
import { emit, renderPairs } from "../Output.ts"
import { progressFlag, waitFlag, watchOperations } from "../Progress.ts"
import { bankIdArgument } from "./Banks.ts"

const importCodebase = Command.make("import", {
  bankId: bankIdArgument,
  name: Flag.String("name").pipe(Flag.withDescription("the codebase's name (re-importing a name needs --refresh)")),
  zip: Flag.File("zip", { mustExist: true }).pipe(Flag.withDescription("a zip archive of the tree"), Flag.optional),
  file: Flag.File("file", { mustExist: true }).pipe(Flag.withDescription("a single source file"), Flag.optional),
  repo: Flag.String("repo").pipe(
    Flag.withDescription("owner/name[@ref] on the git host (SERVICE_API_GITHOST_API_URL)"),
    Flag.optional
  ),
  repoUrl: Flag.String("repo-url").pipe(
    Flag.withDescription("https URL of a repository on the git host"),
    Flag.optional
  ),
  rootPath: Flag.String("root-path").pipe(
    Flag.withDescription("import only this folder of the archive"),
    Flag.optional
  ),
  refresh: Flag.Boolean("refresh").pipe(
    Flag.withDescription("replace an existing codebase of this name"),
    Flag.withDefault(false)
  ),
  progress: progressFlag,
  noWait: waitFlag
}, (input) =>
  withClient(Effect.gen(function*() {
    const sources = [input.zip, input.file, input.repo, input.repoUrl].filter(Option.isSome).length
    if (sources !== 1) return yield* CliFailure.usage("give exactly one of --zip, --file, --repo or --repo-url")
    const client = yield* EngramClient
    const path = yield* Path.Path
    const base = bankPath(input.bankId, "codebases", "import")
    const common = {
      name: input.name,
      ...(input.refresh ? { refresh_existing: true } : {})
    }
    const rootPath = Option.match(input.rootPath, { onNone: () => ({}), onSome: (root_path) => ({ root_path }) })
    const upload = (field: string, file: string, request: object) =>
      Effect.gen(function*() {
        const form = new FormData()
        form.append(field, new Blob([yield* readBytes(file)]), path.basename(file))
        form.append("request", JSON.stringify(request))
        return form
      })
    const body = Option.isSome(input.zip)
      ? yield* client.json("POST", `${base}/zip`, {
        form: yield* upload("archive", input.zip.value, { ...common, ...rootPath })
      })
      : Option.isSome(input.file)
      ? yield* client.json("POST", `${base}/file`, { form: yield* upload("file", input.file.value, common) })
      : yield* client.json("POST", `${base}/githost`, {
        json: {
          ...common,
          ...rootPath,
          ...Option.match(input.repoUrl, { onNone: () => ({}), onSome: (repo_url) => ({ repo_url }) }),
          ...Option.match(input.repo, {
            onNone: () => ({}),
            onSome: (spec) => {
              const [ownerRepo = "", ref] = spec.split("@")
              const [owner, repo] = ownerRepo.split("/")
              return { owner, repo, ...(ref ? { ref } : {}) }
            }
          })
        }
      })
    if (!input.noWait) {
      yield* watchOperations(input.bankId, [body.operation_id], {
        label: `codebase ${input.name}`,
        mode: input.progress
      })
    }
    yield* emit(body, () =>
      renderPairs([
        ["codebase", body.codebase_id],
        ["snapshot", body.snapshot_id],
        ["operation", body.operation_id],
        ["status", input.noWait ? body.status : "imported (review it, then approve)"],
        ["files added / changed / deleted", `${body.added_files} / ${body.changed_files} / ${body.deleted_files}`]
      ]))
  }))).pipe(
    Command.withDescription("Import a codebase snapshot (zip, single file or git host) and wait for it to be built"),
    Command.withExamples([{
      command: "engram codebase import notes --name app --zip app.zip",
      description: "a zip archive"
    }])
  )

export const codebaseCommand = Command.make("codebase").pipe(
  Command.withDescription("Import codebases for review and approval into memory"),
  Command.withSubcommands([importCodebase])
)

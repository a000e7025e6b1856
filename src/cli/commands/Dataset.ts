/** `engram dataset import|export`: training examples in a bank's datasets (forge/taste), as JSONL files. */
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CliFailure } from "../CliFailure.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { readText, writeBytes } from "../LocalFiles.ts"
import { emit, renderPairs } from "../Output.ts"
import { bankIdArgument } from "./Banks.ts"

const tastePath = (bankId: string, ...rest: ReadonlyArray<string>) => bankPath(bankId, "forge", "taste", ...rest)

const importDataset = Command.make("import", {
  bankId: bankIdArgument,
  file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a JSONL file, one example per line")),
  dataset: Flag.String("dataset").pipe(
    Flag.withDescription("id of an existing dataset to add the sets to"),
    Flag.optional
  ),
  name: Flag.String("name").pipe(Flag.withDescription("create a new dataset with this name instead"), Flag.optional),
  schemaType: Flag.Literals("schema-type", ["chat_messages", "openai_chat", "qa_pair", "custom"]).pipe(
    Flag.withDescription("schema type of a new dataset (default chat_messages)"),
    Flag.optional
  ),
  prefix: Flag.String("prefix").pipe(Flag.withDescription("set key prefix"), Flag.optional)
}, (input) =>
  withClient(Effect.gen(function*() {
    if (Option.isSome(input.dataset) === Option.isSome(input.name)) {
      return yield* CliFailure.usage("give exactly one of --dataset ID (existing) or --name NAME (new dataset)")
    }
    const client = yield* EngramClient
    const jsonl = yield* readText(input.file)
    const datasetId: string = Option.isSome(input.dataset) ? input.dataset.value : (yield* client.json(
      "POST",
      tastePath(input.bankId, "datasets"),
      {
        json: {
          name: Option.getOrThrow(input.name),
          ...Option.match(input.schemaType, { onNone: () => ({}), onSome: (schema_type) => ({ schema_type }) })
        }
      }
    )).id
    const body = yield* client.json("POST", tastePath(input.bankId, "datasets", datasetId, "sets"), {
      json: {
        jsonl,
        ...Option.match(input.prefix, { onNone: () => ({}), onSome: (set_key_prefix) => ({ set_key_prefix }) })
      }
    })
    yield* emit({ dataset_id: body.dataset_id, imported_count: body.imported_count }, () =>
      `imported ${body.imported_count} sets into dataset ${body.dataset_id}`)
  }))).pipe(
    Command.withDescription(
      "Import a JSONL file of examples as sets of a dataset (all or nothing; bad rows are named)"
    ),
    Command.withExamples([
      {
        command: "engram dataset import notes qa.jsonl --name \"Support Q&A\" --schema-type qa_pair",
        description: "a new dataset"
      }
    ])
  )

const exportDataset = Command.make("export", {
  bankId: bankIdArgument,
  datasetId: Argument.String("dataset-id").pipe(Argument.withDescription("the dataset's id")),
  adapter: Flag.Literals("adapter", ["chat_messages_jsonl", "openai_chat_jsonl", "atr_jsonl"]).pipe(
    Flag.withDescription("training format (default chat_messages_jsonl)"),
    Flag.optional
  ),
  out: Flag.File("out").pipe(Flag.withDescription("write the JSONL here (default: stdout)"), Flag.optional),
  qualityThreshold: Flag.Finite("quality-threshold").pipe(
    Flag.withDescription("0–1: hold back weaker records"),
    Flag.optional
  )
}, (input) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("POST", tastePath(input.bankId, "export"), {
      json: {
        dataset_id: input.datasetId,
        ...Option.match(input.adapter, { onNone: () => ({}), onSome: (adapter_id) => ({ adapter_id }) }),
        ...Option.match(input.qualityThreshold, {
          onNone: () => ({}),
          onSome: (quality_threshold) => ({ options: { quality_threshold } })
        })
      }
    })
    if (Option.isSome(input.out)) {
      yield* writeBytes(input.out.value, new TextEncoder().encode(body.content))
      const { content: _content, ...summary } = body
      yield* emit({ ...summary, path: input.out.value }, () =>
        renderPairs([
          ["wrote", input.out.pipe(Option.getOrThrow)],
          ["records", body.record_count],
          ["exportable", body.exportable_count],
          ["pass rate", body.quality_summary?.pass_rate]
        ]))
      return
    }
    // Without --out the JSONL itself is the output (one record per line); --json wraps it with the summary.
    yield* emit(body, () => body.content.replace(/\n$/, ""))
  }))).pipe(Command.withDescription("Export a dataset for fine-tuning as JSONL (to a file with --out, else stdout)"))

export const datasetCommand = Command.make("dataset").pipe(
  Command.withDescription("Import and export training datasets (forge/taste)"),
  Command.withSubcommands([importDataset, exportDataset])
)

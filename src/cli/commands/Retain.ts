/**
 * `engram retain BANK [TEXT]` with `--file`, `--dir` or `--jsonl`: text is retained at once; conversations go as
 * asynchronous batches (`batch_retain` operations) and files through file retain (`file_retain` operations), and
 * the command waits for them with a progress bar fed by each operation's progress.
 */
import { Effect, Option, Path } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CliFailure } from "../CliFailure.ts"
import { conversationItems, type RetainItem } from "../ConversationLines.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { readBytes, readText, retainableFilesIn } from "../LocalFiles.ts"
import { emit, renderTable } from "../Output.ts"
import { progressFlag, type ProgressMode, waitFlag, watchOperations } from "../Progress.ts"
import { bankIdArgument } from "./Banks.ts"

/** Items per asynchronous request: well under the API's 10,000 and its request-size limit. */
const itemsPerRequest = 1000
/** Files per file-retain request, and bytes: under the default 50 MiB request limit. */
const filesPerRequest = 16
const bytesPerRequest = 24 * 1024 * 1024

const chunksOf = <A>(values: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(values.length / size) }, (_, index) => values.slice(index * size, (index + 1) * size))

interface Common {
  readonly bankId: string
  readonly context: Option.Option<string>
  readonly tags: ReadonlyArray<string>
  readonly progress: ProgressMode
  readonly noWait: boolean
}

const settle = (common: Common, operationIds: ReadonlyArray<string>, label: string, unit: string, items: number) =>
  Effect.gen(function*() {
    const details = common.noWait
      ? operationIds.map((operation_id) => ({ operation_id, status: "pending" }))
      : yield* watchOperations(common.bankId, operationIds, { label, unit, mode: common.progress })
    const operations = details.map((detail) => ({ operation_id: detail.operation_id, status: detail.status }))
    yield* emit(
      { bank_id: common.bankId, items_count: items, async: true, operations },
      () =>
        `${common.noWait ? "queued" : "retained"} ${items} ${unit} into ${common.bankId}\n` +
        renderTable(
          ["operation_id", "status"],
          operations.map((operation) => [operation.operation_id, operation.status])
        )
    )
  })

const retainItems = (common: Common, items: ReadonlyArray<RetainItem>, label: string) =>
  Effect.gen(function*() {
    const client = yield* EngramClient
    const shared = {
      ...Option.match(common.context, { onNone: () => ({}), onSome: (context) => ({ context }) }),
      ...(common.tags.length > 0 ? { tags: common.tags } : {})
    }
    const operationIds: Array<string> = []
    for (const batch of chunksOf(items, itemsPerRequest)) {
      const body = yield* client.json("POST", bankPath(common.bankId, "memories"), {
        json: { async: true, items: batch.map((item) => ({ ...shared, ...item })) }
      })
      if (typeof body.operation_id === "string") operationIds.push(body.operation_id)
    }
    yield* settle(common, operationIds, label, "items", items.length)
  })

/** A local file and the document id it is retained under. */
interface LocalDocument {
  readonly path: string
  readonly documentId: string
}

const retainFiles = (common: Common, files: ReadonlyArray<LocalDocument>) =>
  Effect.gen(function*() {
    const client = yield* EngramClient
    const path = yield* Path.Path
    const operationIds: Array<string> = []
    let batch: Array<{ name: string; data: Uint8Array }> = []
    let batchBytes = 0
    const flush = Effect.gen(function*() {
      if (batch.length === 0) return
      const form = new FormData()
      for (const file of batch) form.append("files", new Blob([file.data]), path.basename(file.name))
      form.append(
        "request",
        JSON.stringify({
          ...Option.match(common.context, { onNone: () => ({}), onSome: (context) => ({ context }) }),
          ...(common.tags.length > 0 ? { tags: common.tags } : {}),
          // The relative path names the document, so two README.md in different folders stay two documents.
          files_metadata: batch.map((file) => ({ document_id: file.name }))
        })
      )
      const body = yield* client.json("POST", bankPath(common.bankId, "files", "retain"), { form })
      operationIds.push(...body.operation_ids)
      batch = []
      batchBytes = 0
    })
    for (const file of files) {
      const data = yield* readBytes(file.path)
      if (batch.length >= filesPerRequest || (batch.length > 0 && batchBytes + data.length > bytesPerRequest)) {
        yield* flush
      }
      batch.push({ name: file.documentId, data })
      batchBytes += data.length
    }
    yield* flush
    yield* settle(common, operationIds, `retain ${common.bankId}`, "files", files.length)
  })

export const retainCommand = Command.make("retain", {
  bankId: bankIdArgument,
  text: Argument.String("text").pipe(Argument.withDescription("text to retain (one memory item)"), Argument.optional),
  files: Flag.File("file", { mustExist: true }).pipe(
    Flag.withDescription("a document to retain (PDF, DOCX, Markdown, HTML, text, images, ...); repeatable"),
    Flag.atLeast(0)
  ),
  dir: Flag.Directory("dir", { mustExist: true }).pipe(
    Flag.withDescription(
      "retain every convertible document under this directory (hidden folders and node_modules skipped)"
    ),
    Flag.optional
  ),
  jsonl: Flag.File("jsonl", { mustExist: true }).pipe(
    Flag.withDescription(
      "a JSONL conversation: per line a retain item {content,...}, a turn {speaker,text}, or {messages:[...]}"
    ),
    Flag.optional
  ),
  context: Flag.String("context").pipe(
    Flag.withDescription("context for every item (e.g. where it came from)"),
    Flag.optional
  ),
  tags: Flag.String("tag").pipe(Flag.withDescription("a tag for every item; repeatable"), Flag.atLeast(0)),
  async: Flag.Boolean("async").pipe(
    Flag.withDescription("retain TEXT as a background operation and wait for it"),
    Flag.withDefault(false)
  ),
  progress: progressFlag,
  noWait: waitFlag
}, (input) =>
  withClient(Effect.gen(function*() {
    const sources =
      [Option.isSome(input.text), input.files.length > 0, Option.isSome(input.dir), Option.isSome(input.jsonl)]
        .filter(Boolean).length
    if (sources !== 1) {
      return yield* CliFailure.usage("give exactly one of TEXT, --file (repeatable), --dir or --jsonl")
    }
    const common: Common = { ...input, tags: input.tags }
    const path = yield* Path.Path
    if (Option.isSome(input.jsonl)) {
      const { errors, items } = conversationItems(yield* readText(input.jsonl.value))
      if (errors.length > 0) {
        return yield* CliFailure.usage(
          `${input.jsonl.value}: ${errors.slice(0, 10).join("; ")}` +
            (errors.length > 10 ? ` (and ${errors.length - 10} more)` : "")
        )
      }
      if (items.length === 0) return yield* CliFailure.usage(`${input.jsonl.value} holds no items`)
      return yield* retainItems(common, items, `retain ${input.bankId}`)
    }
    if (Option.isSome(input.dir)) {
      const files = yield* retainableFilesIn(input.dir.value)
      if (files.length === 0) {
        return yield* CliFailure.usage(`${input.dir.value} holds no document file retain can read`)
      }
      const root = input.dir.value
      return yield* retainFiles(common, files.map((file) => ({ path: path.join(root, file), documentId: file })))
    }
    if (input.files.length > 0) {
      // A file below the working directory keeps its relative path as id (two README.md stay two documents);
      // one elsewhere is named by its file name, not by a ../../ path.
      return yield* retainFiles(
        common,
        input.files.map((file) => {
          const relative = path.relative(".", path.resolve(file))
          const outside = relative.startsWith("..") || path.isAbsolute(relative)
          return { path: file, documentId: outside ? path.basename(file) : relative }
        })
      )
    }
    const text = Option.getOrThrow(input.text)
    if (input.async) return yield* retainItems(common, [{ content: text }], `retain ${input.bankId}`)
    const client = yield* EngramClient
    const body = yield* client.json("POST", bankPath(input.bankId, "memories"), {
      json: {
        items: [{
          content: text,
          ...Option.match(input.context, { onNone: () => ({}), onSome: (context) => ({ context }) }),
          ...(input.tags.length > 0 ? { tags: input.tags } : {})
        }]
      }
    })
    yield* emit(body, () =>
      `retained into ${input.bankId}: ${body.memories_created ?? "?"} memories created` +
      (body.duplicates_skipped ? `, ${body.duplicates_skipped} duplicates skipped` : ""))
  }))).pipe(
    Command.withDescription("Retain text, documents, a directory or a JSONL conversation into a bank"),
    Command.withExamples([
      { command: "engram retain notes \"Alice moved to Lisbon in May.\"", description: "one memory, at once" },
      { command: "engram retain notes --jsonl chat.jsonl --progress=plain", description: "a conversation, in batches" },
      { command: "engram retain notes --dir ./docs", description: "every document under ./docs" }
    ])
  )

/**
 * `engram forget BANK --entity NAME | --memory-id ID… | --document ID | --tag TAG [--dry-run] [--purge-history]`:
 * forgetting; `--purge-history` also rewrites the bank's memory repo history without it.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { emit, renderTable } from "../Output.ts"
import { bankIdArgument } from "./Banks.ts"

const optionalField = <A>(name: string, value: Option.Option<A>) =>
  Option.match(value, { onNone: () => ({}), onSome: (present) => ({ [name]: present }) })

export const forgetCommand = Command.make("forget", {
  bankId: bankIdArgument,
  entity: Flag.String("entity").pipe(
    Flag.withDescription("every memory naming this entity, and the entity"),
    Flag.optional
  ),
  memoryIds: Flag.String("memory-id").pipe(Flag.withDescription("a memory id; repeatable"), Flag.atLeast(0)),
  document: Flag.String("document").pipe(
    Flag.withDescription("a document id: its memories and the document"),
    Flag.optional
  ),
  tag: Flag.String("tag").pipe(Flag.withDescription("every memory carrying this tag"), Flag.optional),
  dryRun: Flag.Boolean("dry-run").pipe(
    Flag.withDescription("report what would go; change nothing"),
    Flag.withDefault(false)
  ),
  purgeHistory: Flag.Boolean("purge-history").pipe(
    Flag.withDescription("also rewrite the memory repo commits that hold it (commit ids change)"),
    Flag.withDefault(false)
  )
}, (input) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("POST", bankPath(input.bankId, "forget"), {
      json: {
        ...optionalField("entity", input.entity),
        ...(input.memoryIds.length > 0 ? { memory_ids: input.memoryIds } : {}),
        ...optionalField("document_id", input.document),
        ...optionalField("tag", input.tag),
        ...(input.dryRun ? { dry_run: true } : {}),
        ...(input.purgeHistory ? { purge_history: true } : {})
      }
    })
    yield* emit(body, () =>
      `${body.dry_run ? "would forget" : "forgot"}:\n` +
      renderTable(["kind", "count"], Object.entries(body.removed as Record<string, number>).filter(([, n]) => n > 0)) +
      (body.repo_commits.rewrites === undefined
        ? `\nrepo commits that may still hold it: ${body.repo_commits.commit_ids.length} (not rewritten)`
        : `\nrepo commits ${body.dry_run ? "that would be " : ""}rewritten: ${body.repo_commits.rewrites.length}` +
          (body.repo_commits.rewrites.length === 0 ?
            "" :
            `\n${
              renderTable(
                ["old commit", "new commit"],
                (body.repo_commits.rewrites as ReadonlyArray<{ old_commit_id: string; new_commit_id: string }>).map((
                  r
                ) => [r.old_commit_id, r.new_commit_id])
              )
            }`)))
  }))).pipe(
    Command.withDescription("Forget memories (an entity, ids, a document or a tag) and everything derived from them"),
    Command.withExamples([
      { command: "engram forget notes --entity \"Alice Novak\" --dry-run", description: "what would go" },
      { command: "engram forget notes --entity \"Alice Novak\"", description: "forget her, everywhere" },
      {
        command: "engram forget notes --entity \"Alice Novak\" --purge-history",
        description: "and out of every repo commit"
      }
    ])
  )

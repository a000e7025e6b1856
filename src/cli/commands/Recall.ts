/** `engram recall BANK QUERY` and `engram reflect BANK QUERY`: reading a bank. */
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { RecallResult } from "../../domain/Recall.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { emit, renderTable, shorten } from "../Output.ts"
import { bankIdArgument } from "./Banks.ts"

const queryArgument = Argument.String("query").pipe(Argument.withDescription("what to look for"))
const budgetFlag = Flag.Literals("budget", ["low", "mid", "high"]).pipe(
  Flag.withDescription("how much work to spend (recall: candidates per strategy 20/50/120)"),
  Flag.optional
)
const optionalField = <A>(name: string, value: Option.Option<A>) =>
  Option.match(value, { onNone: () => ({}), onSome: (present) => ({ [name]: present }) })

export const recallCommand = Command.make("recall", {
  bankId: bankIdArgument,
  query: queryArgument,
  budget: budgetFlag,
  maxTokens: Flag.Int("max-tokens").pipe(Flag.withDescription("cut the results at this many tokens"), Flag.optional),
  types: Flag.String("type").pipe(
    Flag.withDescription("memory type to search (world, experience, observation, opinion); repeatable"),
    Flag.atLeast(0)
  ),
  tags: Flag.String("tag").pipe(
    Flag.withDescription("only memories with this tag (tags_match any); repeatable"),
    Flag.atLeast(0)
  ),
  limit: Flag.Int("limit").pipe(
    Flag.withDescription("show at most this many results (the table only)"),
    Flag.withDefault(10)
  ),
  trace: Flag.Boolean("trace").pipe(
    Flag.withDescription("ask for the per-strategy trace (printed with --json)"),
    Flag.withDefault(false)
  )
}, (input) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("POST", bankPath(input.bankId, "memories", "recall"), {
      json: {
        query: input.query,
        ...optionalField("budget", input.budget),
        ...optionalField("max_tokens", input.maxTokens),
        ...(input.types.length > 0 ? { types: input.types } : {}),
        ...(input.tags.length > 0 ? { tags: input.tags, tags_match: "any" } : {}),
        ...(input.trace ? { trace: true } : {})
      }
    })
    yield* emit(body, () =>
      body.results.length === 0 ? "no memories found" : renderTable(
        ["#", "score", "type", "when", "memory"],
        body.results.slice(0, input.limit).map((result: typeof RecallResult.Encoded, index: number) => [
          index + 1,
          typeof result.score === "number" ? result.score.toFixed(3) : null,
          result.type,
          (result.occurred_start ?? result.mentioned_at ?? "").slice(0, 10) || null,
          shorten(result.text, 120)
        ])
      ))
  }))).pipe(
    Command.withDescription("Recall the memories of a bank that answer a query"),
    Command.withExamples([{
      command: "engram recall notes \"Where does Alice live?\"",
      description: "best memories first"
    }])
  )

export const reflectCommand = Command.make("reflect", {
  bankId: bankIdArgument,
  query: queryArgument,
  budget: budgetFlag,
  context: Flag.String("context").pipe(Flag.withDescription("extra context for the answer"), Flag.optional)
}, (input) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("POST", bankPath(input.bankId, "reflect"), {
      json: { query: input.query, ...optionalField("budget", input.budget), ...optionalField("context", input.context) }
    })
    const memories = body.based_on?.memories?.length ?? 0
    yield* emit(body, () => `${body.text}\n\n(based on ${memories} memories)`)
  }))).pipe(
    Command.withDescription(
      "Ask a bank a question; it answers from its memories (offline: a deterministic answer that says so)"
    ),
    Command.withExamples([{
      command: "engram reflect notes \"What do I know about Alice?\"",
      description: "an answer with its evidence"
    }])
  )

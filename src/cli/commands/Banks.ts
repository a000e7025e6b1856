/** `engram banks list|create|delete|stats`: the banks of the service. */
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { BankListItem } from "../../domain/Bank.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { emit, renderPairs, renderTable, shorten } from "../Output.ts"

export const bankIdArgument = Argument.String("bank-id").pipe(Argument.withDescription("the bank's id"))

const list = Command.make("list", {}, () =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("GET", "/v1/default/banks")
    yield* emit(body, () =>
      body.banks.length === 0 ? "no banks" : renderTable(
        ["bank_id", "name", "created_at", "mission"],
        body.banks.map((
          bank: typeof BankListItem.Encoded
        ) => [bank.bank_id, bank.name, bank.created_at, shorten(bank.mission ?? "", 60)])
      ))
  }))).pipe(
    Command.withDescription("List the banks"),
    Command.withExamples([{ command: "engram banks list --json", description: "every bank as JSON" }])
  )

const create = Command.make("create", {
  bankId: bankIdArgument,
  name: Flag.String("name").pipe(Flag.withDescription("display name"), Flag.optional),
  mission: Flag.String("mission").pipe(Flag.withDescription("the bank's reflect mission"), Flag.optional),
  preset: Flag.String("preset").pipe(Flag.withDescription("a bank preset to start from"), Flag.optional)
}, ({ bankId, mission, name, preset }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("PUT", bankPath(bankId), {
      json: {
        ...Option.match(name, { onNone: () => ({}), onSome: (value) => ({ name: value }) }),
        ...Option.match(mission, { onNone: () => ({}), onSome: (value) => ({ reflect_mission: value }) }),
        ...Option.match(preset, { onNone: () => ({}), onSome: (value) => ({ bank_preset: value }) })
      }
    })
    yield* emit(body, () => `bank ${body.bank_id} ready${body.name ? ` (${body.name})` : ""}`)
  }))).pipe(
    Command.withDescription("Create a bank, or update its name and mission if it exists"),
    Command.withExamples([{ command: "engram banks create notes --name \"My notes\"", description: "create a bank" }])
  )

const remove = Command.make("delete", { bankId: bankIdArgument }, ({ bankId }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("DELETE", bankPath(bankId))
    yield* emit(body, () => `bank ${bankId} deleted`)
  }))).pipe(Command.withDescription("Delete a bank and everything it owns (memories, documents, operations)"))

const stats = Command.make("stats", { bankId: bankIdArgument }, ({ bankId }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("GET", bankPath(bankId, "stats"))
    const counts = (record: Record<string, number> | undefined) =>
      Object.entries(record ?? {}).map(([key, value]) => `${key} ${value}`).join(", ")
    yield* emit(body, () =>
      renderPairs([
        ["bank", body.bank_id],
        ["memories", body.total_nodes],
        ["by type", counts(body.nodes_by_fact_type)],
        ["links", body.total_links],
        ["by link type", counts(body.links_by_link_type)],
        ["documents", body.total_documents],
        ["pending operations", body.pending_operations],
        ["failed operations", body.failed_operations],
        ["pending consolidation", body.pending_consolidation],
        ["last consolidated", body.last_consolidated_at]
      ]))
  }))).pipe(Command.withDescription("Counts of a bank's memories, links, documents and operations"))

export const banksCommand = Command.make("banks").pipe(
  Command.withDescription("List, create, delete and inspect banks"),
  Command.withSubcommands([list, create, remove, stats])
)

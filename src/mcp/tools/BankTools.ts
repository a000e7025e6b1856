/**
 * MCP tools for banks: read, update and delete the current bank, and — on the multi-bank endpoint only — list,
 * create and count banks. They call `Banks` and show banks with the same views as the REST API.
 */
import { Effect, Option } from "effect"
import { toBankResponse, toListItem } from "../../bank/BankViews.ts"
import { Banks } from "../../bank/Banks.ts"
import { reachable } from "../../auth/BankAccess.ts"
import { BankId, BankUpdate } from "../../domain/Bank.ts"
import { defineTool, described } from "../McpTool.ts"

const bankFields = {
  name: described(BankUpdate.fields.name, "A human-readable name for the bank."),
  mission: described(
    BankUpdate.fields.reflect_mission,
    "Who the bank serves and what it is for (e.g. 'Personal assistant of Alice, a data engineer'); reflect answers " +
      "under it."
  )
}

/** The tool's `mission` is the bank's reflect mission; absent fields stay as they are. */
const toUpdate = (args: { readonly name?: string | null; readonly mission?: string | null }): BankUpdate => ({
  ...(args.name === undefined ? {} : { name: args.name }),
  ...(args.mission === undefined ? {} : { reflect_mission: args.mission })
})

export const bankTools = Effect.gen(function*() {
  const banks = yield* Banks
  const view = (bank: Parameters<typeof toBankResponse>[0]) => toBankResponse(bank, banks.defaults)

  return [
    defineTool({
      name: "get_bank",
      title: "Read the bank",
      description: "Read the memory bank's profile: its name, mission and disposition (skepticism, literalism, " +
        "empathy, 1-5), and its retain and observation settings.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => Effect.map(banks.get(bankId), view)
    }),
    defineTool({
      name: "update_bank",
      title: "Update the bank",
      description: "Set the bank's name and/or mission; only the given fields change. The bank is created if it does " +
        "not exist yet.",
      fields: bankFields,
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, args) => Effect.map(banks.put(bankId, toUpdate(args)), view)
    }),
    defineTool({
      name: "delete_bank",
      title: "Delete the bank",
      description: "Delete the bank and everything it owns: memories, documents, entities, mental models, directives " +
        "and operations. Irreversible.",
      fields: {},
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId) =>
        Effect.as(banks.remove(bankId), { success: true, message: `bank '${bankId}' and everything it owned deleted` })
    }),
    defineTool({
      name: "list_banks",
      title: "List banks",
      description: "List every memory bank on this server with its name and mission. Pass a bank's id as `bank_id` " +
        "to the other tools to work in it.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      multiBankOnly: true,
      usesBank: false,
      run: () =>
        banks.list.pipe(
          Effect.flatMap((all) => reachable(all, (bank) => bank.bankId)),
          Effect.map((all) => ({ banks: all.map(toListItem) }))
        )
    }),
    defineTool({
      name: "create_bank",
      title: "Create a bank",
      description: "Create a memory bank, or return it unchanged if it already exists (`created` tells which).",
      fields: {
        bank_id: described(
          BankId,
          "The new bank's id: letters, digits and . _ : @ - (e.g. 'alice' or 'project:apollo')."
        ),
        ...bankFields
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      multiBankOnly: true,
      usesBank: false,
      run: Effect.fn(function*(_, { bank_id, ...fields }) {
        const existing = yield* Effect.option(banks.get(bank_id))
        if (Option.isSome(existing)) return { created: false, bank: view(existing.value) }
        const created = yield* banks.put(bank_id, toUpdate(fields))
        return { created: true, bank: view(created) }
      })
    }),
    defineTool({
      name: "get_bank_stats",
      title: "Bank statistics",
      description: "Count the bank's memories (nodes) by type, its links by type, documents, observations and " +
        "pending or failed operations.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      multiBankOnly: true,
      run: (bankId) => Effect.map(banks.stats(bankId), (stats) => ({ bank_id: bankId, ...stats }))
    })
  ]
})

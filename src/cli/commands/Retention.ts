/**
 * `engram retention BANK [--max-age TYPE=DAYS]… [--max-memories N] [--half-life DAYS]`: shows the bank's retention
 * policy, or changes it through `PATCH {bank}/config` (the server validates; a refusal exits 3). 0 switches a limit off.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { emit, renderTable } from "../Output.ts"
import { bankIdArgument } from "./Banks.ts"

/** `world=30` → `{ world: 30 }`; anything else is sent as is for the server to name (`retention.max_age_days…`). */
const maxAges = (pairs: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(pairs.map((pair) => {
    const [type = "", days = ""] = pair.split("=", 2)
    const number = Number(days)
    return [type, days.trim() !== "" && Number.isFinite(number) ? number : days]
  }))

export const retentionCommand = Command.make("retention", {
  bankId: bankIdArgument,
  maxAge: Flag.String("max-age").pipe(
    Flag.withDescription(
      "TYPE=DAYS: keep facts of TYPE (world, experience, observation, opinion) this many days; repeatable"
    ),
    Flag.atLeast(0)
  ),
  maxMemories: Flag.Int("max-memories").pipe(
    Flag.withDescription("keep at most this many facts, evicting the least influential first"),
    Flag.optional
  ),
  halfLife: Flag.Finite("half-life").pipe(
    Flag.withDescription("recency half-life of recall scores, in days"),
    Flag.optional
  )
}, (input) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const retention = {
      ...(input.maxAge.length > 0 ? { max_age_days: maxAges(input.maxAge) } : {}),
      ...(input.maxMemories._tag === "Some" ? { max_memories: input.maxMemories.value } : {}),
      ...(input.halfLife._tag === "Some" ? { recency_half_life_days: input.halfLife.value } : {})
    }
    const path = bankPath(input.bankId, "config")
    const body = Object.keys(retention).length === 0
      ? yield* client.json("GET", path)
      : yield* client.json("PATCH", path, { json: { updates: { retention } } })
    const effective = body.config.retention as {
      max_age_days: Record<string, number | null>
      max_memories: number | null
      recency_half_life_days: number | null
    }
    const shown = (value: number | null) => value === null ? "off" : String(value)
    yield* emit({ bank_id: body.bank_id, retention: effective }, () =>
      renderTable(["setting", "value"], [
        ...Object.entries(effective.max_age_days).map(([type, days]) => [`max age (days), ${type}`, shown(days)]),
        ["max memories", shown(effective.max_memories)],
        ["recency half-life (days)", shown(effective.recency_half_life_days)]
      ]))
  }))).pipe(
    Command.withDescription("Show or change a bank's retention policy (maximum ages, maximum count, recency decay)"),
    Command.withExamples([
      { command: "engram retention notes", description: "the current policy" },
      { command: "engram retention notes --max-age experience=30 --max-memories 10000", description: "set limits" },
      { command: "engram retention notes --max-memories 0", description: "remove the count limit" }
    ])
  )

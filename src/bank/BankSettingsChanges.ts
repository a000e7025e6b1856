/**
 * What a change of a bank's settings sets off in features the bank itself does not know: consolidation regenerates
 * observations when the rules they follow changed, the dream scheduler re-reads the bank's schedule, retention checks
 * a new policy. Features register a reaction when their layer is built; whoever saves settings (the bank API, a
 * template import) runs them. A reaction runs inside the transaction that saves the settings, so what it queues is
 * saved with them or not at all; what it returns runs after the commit (waking an actor, which must not look before
 * the queued work is visible).
 */
import { Context, Effect, Layer } from "effect"
import type { Bank } from "../domain/Bank.ts"

export interface SettingsChange {
  readonly bankId: string
  /** The bank before the change; undefined for a bank the change created. */
  readonly before: Bank | undefined
  readonly after: Bank
}

/** Runs inside the saving transaction; the effect it returns runs after the commit. */
export type SettingsReaction = (change: SettingsChange) => Effect.Effect<Effect.Effect<void>>

export class BankSettingsChanges extends Context.Service<BankSettingsChanges, {
  readonly react: (reaction: SettingsReaction) => Effect.Effect<void>
  /** Registers a reaction that only acts after the commit. */
  readonly afterCommit: (reaction: (change: SettingsChange) => Effect.Effect<void>) => Effect.Effect<void>
  /** Runs every reaction for a saved change (inside the saving transaction); returns what runs after the commit. */
  readonly saved: (change: SettingsChange) => Effect.Effect<Effect.Effect<void>>
}>()("engram/bank/BankSettingsChanges") {
  static readonly layer = Layer.sync(BankSettingsChanges, () => {
    const reactions: Array<SettingsReaction> = []
    const react = (reaction: SettingsReaction) => Effect.sync(() => void reactions.push(reaction))
    return BankSettingsChanges.of({
      react,
      afterCommit: (reaction) => react((change) => Effect.succeed(reaction(change))),
      saved: (change) =>
        Effect.map(
          Effect.forEach(reactions, (reaction) => reaction(change)),
          (after) => Effect.forEach(after, (effect) => effect, { discard: true })
        )
    })
  })
}

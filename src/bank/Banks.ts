/**
 * The bank API shared by REST, MCP and in-process callers: create and update with the spec's rules, read,
 * delete (which stops the bank's work and removes everything it owns), profile, statistics, configuration.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { Bank, BankSettings, BankUpdate } from "../domain/Bank.ts"
import { NotFound } from "../domain/Errors.ts"
import { BankActors } from "./BankActors.ts"
import { BankBrains } from "../brain/BankBrains.ts"
import { BankSettingsChanges } from "./BankSettingsChanges.ts"
import { applyBankUpdate, emptySettings, resetSettings } from "./BankSettings.ts"
import type { BankStatsCounts } from "./BankStore.ts"
import { BankStore } from "./BankStore.ts"
import { seedBankPreset } from "../presets/PresetSeeding.ts"

export class Banks extends Context.Service<Banks, {
  readonly list: Effect.Effect<ReadonlyArray<Bank>>
  readonly get: (bankId: string) => Effect.Effect<Bank, NotFound>
  /**
   * The bank as this process last read or saved it: recall reads its settings on every call and, with the bank's
   * brain loaded, must not wait on the database for them. Saves and deletes here refresh it; a change saved by
   * another cluster node is seen here once the bank is read again (its brain released or this process restarted).
   */
  readonly cached: (bankId: string) => Effect.Effect<Bank, NotFound>
  /** Returns the bank, creating it with defaults first if needed (profile reads, retain into a new bank). */
  readonly ensure: (bankId: string) => Effect.Effect<Bank>
  /** PUT: creates the bank or updates the given fields of an existing one. */
  readonly put: (bankId: string, update: BankUpdate) => Effect.Effect<Bank>
  /** PATCH: updates the given fields of an existing bank. */
  readonly patch: (bankId: string, update: BankUpdate) => Effect.Effect<Bank, NotFound>
  readonly resetConfig: (bankId: string) => Effect.Effect<Bank, NotFound>
  readonly remove: (bankId: string) => Effect.Effect<void, NotFound>
  readonly stats: (bankId: string) => Effect.Effect<BankStatsCounts, NotFound>
  readonly defaults: { readonly retainChunkSize: number; readonly enableObservations: boolean }
}>()("engram/bank/Banks") {
  static readonly layer = Layer.effect(
    Banks,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* BankStore
      const actors = yield* BankActors
      const brains = yield* BankBrains
      const config = yield* EngramConfig
      // What other features do when settings change (regenerate observations, re-read a dream schedule, ...).
      const settingsChanges = yield* BankSettingsChanges

      const known = new Map<string, Bank>()

      const get = Effect.fn("Banks.get")(function*(bankId: string) {
        const found = yield* store.find(bankId)
        if (Option.isNone(found)) {
          known.delete(bankId)
          return yield* NotFound.of("bank", bankId)
        }
        known.set(bankId, found.value)
        return found.value
      })

      const cached = (bankId: string) => {
        const hit = known.get(bankId)
        return hit === undefined ? get(bankId) : Effect.succeed(hit)
      }

      // Settings saved elsewhere (a template import) are the ones recall reads next.
      yield* settingsChanges.afterCommit(({ bankId, after }) => Effect.sync(() => void known.set(bankId, after)))

      /**
       * Saves new settings and, in the same transaction, runs what other features do about the change (`before` is
       * none for a new bank); what they ask to run after the commit (waking an actor) runs once it is visible.
       */
      const save = (bankId: string, before: Option.Option<Bank>, next: BankSettings) =>
        Effect.gen(function*() {
          const saved = yield* store.save(bankId, next)
          const afterCommit = yield* settingsChanges.saved({
            bankId,
            before: Option.getOrUndefined(before),
            after: saved
          })
          return { saved, afterCommit }
        }).pipe(
          sql.withTransaction,
          Effect.orDie,
          Effect.tap(({ afterCommit }) => afterCommit),
          Effect.map(({ saved }) => saved)
        )

      const put = Effect.fn("Banks.put")(function*(bankId: string, update: BankUpdate) {
        const current = yield* store.find(bankId)
        const base = Option.getOrElse(current, () => emptySettings)
        const saved = yield* save(bankId, current, applyBankUpdate(base, update))
        yield* seedBankPreset(sql, bankId, update.bank_preset)
        return saved
      })

      const patch = Effect.fn("Banks.patch")(function*(bankId: string, update: BankUpdate) {
        const current = yield* get(bankId)
        const saved = yield* save(bankId, Option.some(current), applyBankUpdate(current, update))
        yield* seedBankPreset(sql, bankId, update.bank_preset)
        return saved
      })

      const resetConfig = Effect.fn("Banks.resetConfig")(function*(bankId: string) {
        const current = yield* get(bankId)
        return yield* save(bankId, Option.some(current), resetSettings(current))
      })

      const remove = Effect.fn("Banks.remove")(function*(bankId: string) {
        const removed = yield* store.remove(bankId)
        known.delete(bankId)
        if (!removed) return yield* NotFound.of("bank", bankId)
        yield* brains.drop(bankId)
        // Its kept `.brain` file and vector index hold its memories: they go with it.
        yield* brains.updateKeptFile(bankId, "drop")
        const status = yield* actors.status(bankId)
        if (status.currentOperationId !== null) yield* actors.interrupt(status.currentOperationId)
      })

      const stats = Effect.fn("Banks.stats")(function*(bankId: string) {
        yield* get(bankId)
        return yield* store.stats(bankId)
      })

      return Banks.of({
        list: store.list,
        get,
        cached,
        ensure: store.ensure,
        put,
        patch,
        resetConfig,
        remove,
        stats,
        defaults: { retainChunkSize: config.defaultChunkSize, enableObservations: config.enableObservations }
      })
    })
  )
}

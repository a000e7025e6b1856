/**
 * One write lock per bank (in this process): retain, document replacement and deletions of the same bank run
 * one at a time, so deduplication and entity resolution see each other's writes. Reads never take it.
 */
import { Context, Effect, Layer, Semaphore } from "effect"

export class BankLocks extends Context.Service<BankLocks, {
  readonly withWriteLock: (bankId: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("engram/bank/BankLocks") {
  static readonly layer = Layer.sync(BankLocks, () => {
    const locks = new Map<string, Semaphore.Semaphore>()
    const lockFor = (bankId: string) => {
      let lock = locks.get(bankId)
      if (lock === undefined) {
        lock = Semaphore.makeUnsafe(1)
        locks.set(bankId, lock)
      }
      return lock
    }
    return BankLocks.of({
      withWriteLock: (bankId) => (effect) => Effect.suspend(() => lockFor(bankId).withPermit(effect))
    })
  })
}

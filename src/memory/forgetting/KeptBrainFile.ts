/**
 * After memories were deleted by forget or a sweep: the brain catches up with the deletions from the change log,
 * then the bank's kept `.brain` file, when it has one, is written again from it, so the file no longer holds what was
 * deleted. A file that cannot be written again is removed (it is rebuilt later) rather than left holding the content
 * (`BankBrains.updateKeptFile`, attached by the brain runtime). Runs after the deleting transaction committed; never
 * inside it. (The ordinary deletes of a few memories remove the file instead: `MemoryDeletion`.)
 */
import { Effect, Option } from "effect"
import { BankBrains } from "../../brain/BankBrains.ts"

export const makeKeptBrainFile = Effect.gen(function*() {
  const brains = yield* BankBrains

  /** `updated`: a brain is loaded and caught up; `file_rewritten`: the kept file was written again. */
  return Effect.fn("Forgetting.afterDeletion")(function*(bankId: string) {
    const brain = yield* brains.available(bankId)
    const rewritten = yield* brains.updateKeptFile(bankId)
    return { updated: Option.isSome(brain), file_rewritten: rewritten }
  })
})

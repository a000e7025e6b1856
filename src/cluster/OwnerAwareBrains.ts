/**
 * `BankBrains` for the services above the engine on a cluster node: a write made here (a memory or document
 * deleted through this node, a retain that fell back here) also reaches the brain on the bank's owner, which
 * otherwise would keep answering recalls without it. The owner's own writes, and single-process mode, are as before.
 */
import { Effect, Layer } from "effect"
import { BankBrains } from "../brain/BankBrains.ts"
import { ClusterNode } from "./ClusterNode.ts"

export const OwnerAwareBrains = Layer.effect(
  BankBrains,
  Effect.gen(function*() {
    const brains = yield* BankBrains
    const node = yield* ClusterNode
    if (node.role === "off") return brains
    return BankBrains.of({
      ...brains,
      changed: (bankId) => Effect.andThen(brains.changed(bankId), node.changedHere(bankId)),
      applyWrite: (bankId, written) => Effect.andThen(brains.applyWrite(bankId, written), node.changedHere(bankId))
    })
  })
)

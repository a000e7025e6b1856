/**
 * The engine of engram without any server: banks, operations and the bank actors over the database. This is
 * what an Effect program embeds to use engram in-process.
 */
import { Effect, Layer } from "effect"
import { BankActors } from "../src/bank/BankActors.ts"
import { Banks } from "../src/bank/Banks.ts"
import { BankStore } from "../src/bank/BankStore.ts"
import { Operations } from "../src/operations/Operations.ts"
import { OperationStore } from "../src/operations/OperationStore.ts"
import { TaskRegistry } from "../src/operations/TaskRegistry.ts"
import { DatabaseLive } from "./Database.ts"

const Stores = Layer.mergeAll(BankStore.layer, OperationStore.layer, TaskRegistry.layer)

/** Every task type engram runs in the background; later features add their handler layers here. */
export const TaskHandlers = Layer.empty

const Engine = Layer.mergeAll(Banks.layer, Operations.layer).pipe(
  Layer.provideMerge(BankActors.layer),
  Layer.provideMerge(Stores)
)

/** Starts the actors once every handler is registered, so recovered work finds its handler. */
const WorkerStartup = Layer.effectDiscard(Effect.gen(function*() {
  const actors = yield* BankActors
  yield* actors.start
}))

export const ServicesLive = WorkerStartup.pipe(
  Layer.provide(TaskHandlers),
  Layer.provideMerge(Engine),
  Layer.provideMerge(DatabaseLive)
)

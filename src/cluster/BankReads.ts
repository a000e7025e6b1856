/**
 * Reads that need a bank's brain, as an `effect/cluster` entity keyed by bank id: a node that does not own the
 * bank's shard sends its recall to the owner, whose brain (graph snapshot, keyword index) is built and kept warm
 * there, instead of building and catching up a second copy of the brain for itself. Volatile like `Wake`: a read
 * lost with a dying runner is answered locally by the sender (src/cluster/RoutedRecall.ts).
 */
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { RecallRequest, RecallResponse } from "../domain/Recall.ts"

// Request and response travel as JSON text: the cluster's binary serialization cannot lay out their unions.
export const RecallOnOwner = Rpc.make("Recall", {
  payload: { request: Schema.fromJsonString(RecallRequest) },
  success: Schema.fromJsonString(RecallResponse),
  error: Schema.Union([NotFound, ValidationError, ServiceUnavailable])
})

export const BankReads = Entity.make("BankReads", [RecallOnOwner])

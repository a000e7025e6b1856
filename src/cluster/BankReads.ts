/**
 * Requests that belong on a bank's owner, as `effect/cluster` entities keyed by bank id. Recall and influence
 * analytics read the bank's brain (graph snapshot, keyword index), which is built and kept warm on the owner; a
 * synchronous retain writes there, so the owner's brain takes the write as a delta at once. A node that does not
 * own the bank's shard sends them to the owner instead of building and catching up a second brain. Volatile like
 * `Wake`: a request lost with a dying runner is answered locally by the sender (src/cluster/OnOwner.ts).
 */
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { BrainInfluenceResponse, influenceEntityTypes } from "../domain/BrainInfluence.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { RetainRequest } from "../domain/Memory.ts"
import { RecallRequest, RecallResponse } from "../domain/Recall.ts"

// Requests and responses travel as JSON text: the cluster's binary serialization cannot lay out their unions.
export const RecallOnOwner = Rpc.make("Recall", {
  payload: { request: Schema.fromJsonString(RecallRequest) },
  success: Schema.fromJsonString(RecallResponse),
  error: Schema.Union([NotFound, ValidationError, ServiceUnavailable])
})

export const BankReads = Entity.make("BankReads", [RecallOnOwner])

const RetainOutcome = Schema.Struct({
  created: Schema.Number,
  duplicates: Schema.Number,
  usage: Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number, totalTokens: Schema.Number })
})

export const RetainOnOwner = Rpc.make("Retain", {
  payload: { request: Schema.fromJsonString(RetainRequest) },
  success: Schema.fromJsonString(RetainOutcome),
  // ValidationError: the bank's memory defense blocked every item.
  error: Schema.Union([ServiceUnavailable, ValidationError])
})

/** A synchronous retain, run by the owner (an asynchronous one is an operation, which runs there anyway). */
export const BankWrites = Entity.make("BankWrites", [RetainOnOwner])

export const InfluenceOnOwner = Rpc.make("Influence", {
  payload: {
    options: Schema.fromJsonString(Schema.Struct({
      windowDays: Schema.Number,
      topK: Schema.Number,
      entityType: Schema.Literals(influenceEntityTypes)
    }))
  },
  success: Schema.fromJsonString(BrainInfluenceResponse),
  error: NotFound
})

/** Views computed from the bank's brain graph (influence analytics ranks memories by PageRank over it). */
export const BankViews = Entity.make("BankViews", [InfluenceOnOwner])

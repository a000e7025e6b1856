/**
 * The `form_opinion` task: after a model-written reflect answer, the model is asked which judgements the bank now
 * holds (not plain facts), each with a confidence; new ones are stored as `opinion` memories linked to the facts
 * the answer was based on. Idempotent: ids derive from the operation id, and an opinion the bank already holds
 * (same content) is left as it is. Without a language model there is nothing to form.
 */
import { Clock, Effect, Schema } from "effect"
import { BankLocks } from "../../bank/BankLocks.ts"
import { GraphRecall } from "../../memory/recall/GraphRecall.ts"
import { contentHash } from "../../memory/retain/ContentHash.ts"
import { modelKey } from "../../memory/Reembedding.ts"
import { Embeddings } from "../../models/Embeddings.ts"
import { Llm } from "../../models/Llm.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { OpinionStore } from "./OpinionStore.ts"

const Payload = Schema.Struct({
  query: Schema.String,
  answer: Schema.String,
  memory_ids: Schema.Array(Schema.String),
  tags: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The `reflect` operation that queued this one, so a re-run of it does not queue another. */
  reflect_operation_id: Schema.optionalKey(Schema.String)
})
const decodePayload = Schema.decodeUnknownEffect(Payload)

export const FormedOpinions = Schema.Struct({
  opinions: Schema.Array(Schema.Struct({ text: Schema.String, confidence: Schema.Number }))
})

/** At most this many opinions per reflect: an answer worth remembering rarely holds more. */
const maxOpinions = 3

const failure = (message: string, retryable: boolean) => new TaskFailure({ message, retryable })

export const clampConfidence = (value: number) => Math.min(0.99, Math.max(0.01, Number.isFinite(value) ? value : 0.5))

const systemPrompt = [
  "You keep the opinions of a long-term memory bank: judgements, assessments, preferences and expectations it " +
  "holds, formed by reflecting on its memories.",
  `From the question and the answer the bank just gave, list at most ${maxOpinions} opinions the bank now holds.`,
  "- An opinion is a judgement (\"Alice is a reliable colleague\", \"the Lisbon trip is likely to be postponed\"), " +
  "not a restated fact (\"Alice works at Acme\").",
  "- Each is one self-contained sentence with names instead of pronouns.",
  "- confidence (0 to 1) is how strongly the answer's evidence supports it.",
  "- If the answer only reports facts or says nothing is known, return no opinions.",
  "Answer with JSON: {\"opinions\": [{\"text\": \"...\", \"confidence\": 0.7}]}."
].join("\n")

export const FormOpinionTask = TaskRegistry.handler(
  "form_opinion",
  Effect.gen(function*() {
    const llm = yield* Llm
    const embeddings = yield* Embeddings
    const store = yield* OpinionStore
    const locks = yield* BankLocks
    const graph = yield* GraphRecall

    return (operation) =>
      Effect.gen(function*() {
        const payload = yield* decodePayload(operation.payload).pipe(
          Effect.mapError(() =>
            new TaskFailure({ message: "the stored form_opinion payload is invalid", retryable: false })
          )
        )
        if (!llm.available("reflect")) return { opinions: [], skipped: "no language model is configured" }
        const { value } = yield* llm.generateObject({
          purpose: "reflect",
          scope: "reflect.form_opinion",
          bankId: operation.bankId,
          operationId: operation.id,
          objectName: "opinions",
          schema: FormedOpinions,
          messages: [
            { role: "system", content: systemPrompt },
            { role: "user", content: `Question: ${payload.query}\n\nAnswer:\n${payload.answer}` }
          ]
        })
        const candidates = value.opinions
          .map((opinion) => ({ text: opinion.text.trim(), confidence: clampConfidence(opinion.confidence) }))
          .filter((opinion) => opinion.text !== "")
          .slice(0, maxOpinions)
        const fresh: Array<typeof candidates[number] & { readonly hash: string; readonly index: number }> = []
        for (const [index, opinion] of candidates.entries()) {
          const hash = contentHash(opinion.text)
          if ((yield* store.findByHash(operation.bankId, hash)) === undefined) fresh.push({ ...opinion, hash, index })
        }
        const vectors = fresh.length === 0 ? [] : yield* embeddings.embedDocuments(fresh.map((opinion) => opinion.text))
        const now = new Date(yield* Clock.currentTimeMillis)
        const written = yield* locks.withWriteLock(operation.bankId)(Effect.forEach(fresh, (opinion, position) => {
          const id = `${operation.id}-opinion-${opinion.index}`
          return Effect.map(
            store.insert({
              id,
              bankId: operation.bankId,
              text: opinion.text,
              confidence: opinion.confidence,
              contentHash: opinion.hash,
              sourceFactIds: payload.memory_ids,
              tags: payload.tags ?? [],
              operationId: operation.id,
              embedding: vectors[position]!,
              embeddingModel: modelKey(embeddings.identity),
              mentionedAt: now
            }),
            (inserted) => ({ id, text: opinion.text, confidence: opinion.confidence, inserted })
          )
        }))
        if (written.some((opinion) => opinion.inserted)) yield* graph.changed(operation.bankId)
        return {
          opinions: written.map(({ id, text, confidence }) => ({ id, text, confidence })),
          already_held: candidates.length - fresh.length
        }
      }).pipe(
        Effect.catchTags({
          LlmError: (error) => Effect.fail(failure(`forming opinions failed: ${error.message}`, error.retryable)),
          EmbeddingError: (error) =>
            Effect.fail(failure(`embedding opinions failed: ${error.message}`, error.retryable))
        })
      )
  })
)

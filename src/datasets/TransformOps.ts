/**
 * The transform operations on one payload: `raw` (unchanged), `spellfix_llm` and `tone_shift` through the
 * configured language model (the consolidation purpose, as in the reference service), and paraphrased variants.
 * The model rewrites the example's texts only (see TextSlots); whatever it answers is put back into the
 * original structure and validated against the schema type, so a broken answer is refused for that set alone.
 */
import { Effect, Schema } from "effect"
import type { SchemaType, TransformOpId } from "../domain/Dataset.ts"
import { storableText } from "../domain/StorableText.ts"
import { Llm, type LlmPurpose } from "../models/Llm.ts"
import { type JsonObject, payloadProblems, structureChange } from "./Payloads.ts"
import { textsOf, withTexts } from "./TextSlots.ts"

/** Transforms and variants use the model configured for consolidation (its own overrides, else the default). */
export const tastePurpose: LlmPurpose = "consolidation"

export const offlineMessage =
  "needs a language model: set SERVICE_API_LLM_PROVIDER (or SERVICE_API_CONSOLIDATION_LLM_PROVIDER) to openai, anthropic or gemini"

export const Tone = Schema.Literals(["concise", "formal", "friendly"])
export type Tone = typeof Tone.Type

const toneHints: Record<Tone, string> = {
  concise: "Make every text shorter and more direct",
  formal: "Rewrite every text in a formal, professional register",
  friendly: "Rewrite every text in a warm, conversational register"
}

export const requiresLlm = (op: TransformOpId) => op !== "raw"

/** Why a transform could not change a set; the set stays as it was. */
export class TransformRefused extends Schema.TaggedError<TransformRefused>()("TransformRefused", {
  message: Schema.String
}) {}

const TextsAnswer = Schema.Struct({ texts: Schema.Array(Schema.String) })
const VariantsAnswer = Schema.Struct({ variants: Schema.Array(Schema.Array(Schema.String)) })

const systemPrompt =
  "You edit examples of a fine-tuning dataset. You receive an example as JSON and its texts as a numbered list. " +
  "Answer with JSON only: the rewritten texts, in the same order and the same number. Never merge, split, drop or " +
  "add texts, never translate, and keep names, numbers, code, labels and facts unchanged."

const numbered = (texts: ReadonlyArray<string>) =>
  texts.map((text, index) => `${index + 1}. ${JSON.stringify(text)}`).join("\n")

const instructionFor = (op: "spellfix_llm" | "tone_shift", tone: Tone) =>
  op === "spellfix_llm"
    ? "Correct spelling, grammar and punctuation in every text. Change nothing else: keep the wording, meaning and length."
    : `${toneHints[tone]}, while preserving every fact and label.`

export interface OpContext {
  readonly bankId: string
  readonly operationId: string | null
  readonly schemaType: SchemaType
}

/** Checks a rewritten payload: same structure, valid for the schema type. */
const accept = (label: string, schemaType: SchemaType, before: JsonObject, texts: ReadonlyArray<string>) => {
  // Model output is text from outside too: cleaned like request bodies so the database can store it.
  const rebuilt = withTexts(schemaType, before, texts.map(storableText))
  if (rebuilt._tag === "mismatch") {
    return Effect.fail(new TransformRefused({ message: `${label} answer does not fit the example: ${rebuilt.reason}` }))
  }
  const problems = payloadProblems(schemaType, rebuilt.payload)
  if (problems.length > 0) {
    return Effect.fail(
      new TransformRefused({ message: `${label} answer breaks the ${schemaType} schema: ${problems.join("; ")}` })
    )
  }
  const changed = structureChange(schemaType, before, rebuilt.payload)
  if (changed !== null) {
    return Effect.fail(new TransformRefused({ message: `${label} answer changed the structure: ${changed}` }))
  }
  return Effect.succeed(rebuilt.payload)
}

const modelFailure = (label: string) => (error: { readonly message: string }) =>
  new TransformRefused({ message: `${label} failed: ${error.message}` })

/** Applies one op to a payload; `model` is the `provider/model` that answered, or null for `raw`. */
export const applyOp = Effect.fn("TasteTransform.op")(function*(
  op: TransformOpId,
  params: JsonObject,
  payload: JsonObject,
  context: OpContext
) {
  if (op === "raw") return { payload, model: null as string | null }
  const llm = yield* Llm
  const tone = Schema.decodeUnknownOption(Tone)(params["tone"] ?? "concise")
  const texts = textsOf(context.schemaType, payload)
  const { value } = yield* llm.generateObject({
    purpose: tastePurpose,
    scope: op === "spellfix_llm" ? "taste.spellfix" : "taste.tone_shift",
    bankId: context.bankId,
    operationId: context.operationId ?? undefined,
    objectName: "rewritten_texts",
    schema: TextsAnswer,
    temperature: op === "spellfix_llm" ? 0.1 : 0.4,
    maxOutputTokens: 4096,
    messages: [
      { role: "system", content: systemPrompt },
      {
        role: "user",
        content:
          `${instructionFor(op, tone._tag === "Some" ? tone.value : "concise")}\n\nExample:\n${
            JSON.stringify(payload)
          }\n\n` +
          `Texts (${texts.length}):\n${
            numbered(texts)
          }\n\nAnswer as {"texts": [...]} with exactly ${texts.length} strings.`
      }
    ]
  }).pipe(Effect.mapError(modelFailure(op)))
  const after = yield* accept(op, context.schemaType, payload, value.texts)
  return { payload: after, model: llm.describe(tastePurpose) as string | null }
})

/** Paraphrased variants of a seed: the valid ones among the first `count` answered (at least one, else refused). */
export const generateVariants = Effect.fn("TasteTransform.variants")(function*(
  seed: JsonObject,
  count: number,
  instruction: string | null,
  context: OpContext
) {
  const llm = yield* Llm
  const texts = textsOf(context.schemaType, seed)
  const { value } = yield* llm.generateObject({
    purpose: tastePurpose,
    scope: "taste.generate_variants",
    bankId: context.bankId,
    operationId: context.operationId ?? undefined,
    objectName: "variants",
    schema: VariantsAnswer,
    temperature: 0.7,
    maxOutputTokens: 8192,
    messages: [
      { role: "system", content: systemPrompt },
      {
        role: "user",
        content:
          `Write ${count} different paraphrases of this example: each keeps the intent, the facts and the labels ` +
          `but words every text differently.${instruction ? `\nAlso: ${instruction}` : ""}\n\nExample:\n${
            JSON.stringify(seed)
          }\n\n` +
          `Texts (${texts.length}):\n${
            numbered(texts)
          }\n\nAnswer as {"variants": [[...], ...]}: ${count} lists of exactly ` +
          `${texts.length} strings each.`
      }
    ]
  }).pipe(Effect.mapError(modelFailure("generate")))
  const accepted: Array<JsonObject> = []
  const reasons: Array<string> = []
  for (const candidate of value.variants.slice(0, count)) {
    const checked = yield* accept("generate", context.schemaType, seed, candidate).pipe(Effect.result)
    if (checked._tag === "Success") accepted.push(checked.success)
    else reasons.push(checked.failure.message)
  }
  if (accepted.length === 0) {
    return yield* new TransformRefused({
      message: reasons.length === 0 ? "generate answered no variants" : `no usable variant: ${reasons[0]}`
    })
  }
  return { variants: accepted, model: llm.describe(tastePurpose) }
})

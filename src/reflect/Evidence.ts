/**
 * What a reflect has read so far: memories (facts, observations, opinions) and mental models, deduplicated, kept
 * within the policy's token budget, with short references ([F1], [O2], [M1]) the prompt and the offline synthesis
 * use. It is the single source of `based_on`: what the answer was based on is exactly what was shown.
 */
import type { BasedOnMemory, BasedOnMentalModel } from "../domain/Reflect.ts"
import type { RecallResult } from "../domain/Recall.ts"
import { countTokens } from "../memory/retain/Tokens.ts"

export interface EvidenceMemory {
  readonly ref: string
  readonly id: string
  readonly text: string
  readonly type: string | null
  readonly context: string | null
  readonly occurredStart: string | null
  readonly occurredEnd: string | null
  readonly mentionedAt: string | null
  readonly entities: ReadonlyArray<string>
  /** Relevance from recall (0–1) and the order it was found in: the offline synthesis ranks by them. */
  readonly score: number
  readonly order: number
  /** The newer memory that replaced this one, if any: answers must prefer it and may say what changed. */
  readonly supersededBy: string | null
}

export interface EvidenceModel {
  readonly ref: string
  readonly id: string
  readonly name: string
  readonly content: string
}

const prefix = (type: string | null) => type === "observation" ? "O" : type === "opinion" ? "B" : "F"

/** The day a memory is about (when it happened, else when it was said), for prompts and summaries. */
export const memoryDate = (memory: { readonly occurredStart: string | null; readonly mentionedAt: string | null }) =>
  (memory.occurredStart ?? memory.mentionedAt)?.slice(0, 10) ?? null

export class Evidence {
  readonly memories: Array<EvidenceMemory> = []
  readonly models: Array<EvidenceModel> = []
  private readonly seen = new Set<string>()
  private readonly counters: Record<string, number> = {}
  private used = 0

  readonly maxTokens: number

  constructor(maxTokens: number) {
    this.maxTokens = maxTokens
  }

  get tokensUsed() {
    return this.used
  }

  get tokensLeft() {
    return Math.max(0, this.maxTokens - this.used)
  }

  get isEmpty() {
    return this.memories.length === 0 && this.models.length === 0
  }

  private nextRef(letter: string) {
    this.counters[letter] = (this.counters[letter] ?? 0) + 1
    return `${letter}${this.counters[letter]}`
  }

  /** Adds the results not seen yet, in order, while they fit; returns the ones added. */
  addMemories(results: ReadonlyArray<RecallResult>): ReadonlyArray<EvidenceMemory> {
    const added: Array<EvidenceMemory> = []
    for (const result of results) {
      if (this.seen.has(result.id)) continue
      const cost = countTokens(result.text) + 12
      if (cost > this.tokensLeft) break
      this.seen.add(result.id)
      this.used += cost
      const memory: EvidenceMemory = {
        ref: this.nextRef(prefix(result.type)),
        id: result.id,
        text: result.text,
        type: result.type,
        context: result.context,
        occurredStart: result.occurred_start,
        occurredEnd: result.occurred_end,
        mentionedAt: result.mentioned_at,
        entities: result.entities ?? [],
        score: result.score ?? 0,
        order: this.memories.length,
        supersededBy: result.superseded_by ?? null
      }
      this.memories.push(memory)
      added.push(memory)
    }
    return added
  }

  /** Adds whole mental models while they fit in `cap` tokens (the first one only needs to fit the budget). */
  addModels(
    models: ReadonlyArray<{ readonly id: string; readonly name: string; readonly content: string }>,
    cap: number
  ) {
    const added: Array<EvidenceModel> = []
    let spent = 0
    for (const model of models) {
      const key = `model:${model.id}`
      if (this.seen.has(key)) continue
      const cost = countTokens(model.content) + countTokens(model.name) + 12
      if (cost > this.tokensLeft || (added.length > 0 && spent + cost > cap)) continue
      spent += cost
      this.seen.add(key)
      this.used += cost
      const entry = { ref: this.nextRef("M"), id: model.id, name: model.name, content: model.content }
      this.models.push(entry)
      added.push(entry)
    }
    return added
  }

  /** The evidence as the prompt shows it, grouped by kind. */
  render(): string {
    if (this.isEmpty) return "(nothing found yet)"
    const sections: Array<string> = []
    if (this.models.length > 0) {
      sections.push(
        "Mental models (curated summaries):\n" +
          this.models.map((model) => `[${model.ref}] ${model.name}\n${model.content}`).join("\n\n")
      )
    }
    const line = (memory: EvidenceMemory) => {
      const date = memoryDate(memory)
      const context = memory.context ? `; context: ${memory.context}` : ""
      const replaced = memory.supersededBy === null ? "" : "; superseded by a newer memory"
      return `[${memory.ref}] (${memory.type ?? "memory"}${
        date ? `, ${date}` : ""
      }${context}${replaced}) ${memory.text}`
    }
    const observations = this.memories.filter((memory) => memory.type === "observation" || memory.type === "opinion")
    const facts = this.memories.filter((memory) => memory.type !== "observation" && memory.type !== "opinion")
    if (observations.length > 0) {
      sections.push("Observations and the bank's opinions:\n" + observations.map(line).join("\n"))
    }
    if (facts.length > 0) sections.push("Facts:\n" + facts.map(line).join("\n"))
    return sections.join("\n\n")
  }
}

export const toBasedOnMemory = (memory: EvidenceMemory): BasedOnMemory => ({
  id: memory.id,
  text: memory.text,
  type: memory.type,
  context: memory.context,
  occurred_start: memory.occurredStart,
  occurred_end: memory.occurredEnd
})

export const toBasedOnModel = (model: EvidenceModel): BasedOnMentalModel => ({
  id: model.id,
  text: model.content,
  context: model.name
})

/** What an extractor (offline or LLM) makes of one chunk of retained content, before storage. */

export type CausalRelation = "causes" | "caused_by" | "enables" | "prevents"

export interface ExtractedEntity {
  readonly name: string
  readonly type: string | null
}

export interface ExtractedFact {
  readonly text: string
  readonly factType: "world" | "experience"
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly entities: ReadonlyArray<ExtractedEntity>
  /** Relations from this fact to earlier facts of the same chunk, by their index in the chunk's list. */
  readonly causes: ReadonlyArray<{ readonly target: number; readonly relation: CausalRelation }>
}

export interface ExtractionInput {
  readonly text: string
  readonly context: string | null
  /** When the content was said or written; relative times resolve against it. Null for timeless content. */
  readonly mentionedAt: Date | null
  readonly mode: "concise" | "verbose" | "custom"
  readonly mission: string | null
  readonly customInstructions: string | null
}

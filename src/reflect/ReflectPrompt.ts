/**
 * The words reflect sends to the model: the system prompt (role, the bank's reflect mission, its directives as
 * numbered hard rules in priority order, its disposition as concrete instructions, the date), the search turn
 * (question, evidence so far, searches left, the JSON action protocol), the final answer turn and the
 * structured-output turn. Pure string building; no I/O.
 */
import type { DispositionTraits } from "../domain/Bank.ts"
import type { DirectiveResponse } from "../domain/Directive.ts"
import { dispositionInstructions } from "./Disposition.ts"
import type { Evidence } from "./Evidence.ts"
import { toolDescriptions, toolNames } from "./ReflectTools.ts"

export interface PromptContext {
  readonly mission: string | null
  readonly directives: ReadonlyArray<DirectiveResponse>
  readonly disposition: DispositionTraits
  /** ISO date of today, so "recently" and "last year" can be judged. */
  readonly today: string
}

export const systemPrompt = (context: PromptContext): string =>
  [
    "You are the reflective mind of a long-term memory bank. You answer questions by reasoning over what the bank " +
    "remembers: facts, observations, its own opinions and curated mental models. Ground every statement in that " +
    "evidence; when the evidence does not answer the question, say so instead of inventing an answer.",
    context.mission ? `Mission of this bank (what your answers are for):\n${context.mission}` : "",
    context.directives.length > 0
      ? "Directives — hard rules that override everything else, including the question's wording. Follow all of them; " +
        "when two conflict, the one listed first wins:\n" +
        context.directives.map((directive, index) => `${index + 1}. ${directive.name}: ${directive.content}`).join("\n")
      : "",
    "Disposition — how to weigh evidence and how to speak:\n" +
    dispositionInstructions(context.disposition).map((line) => `- ${line}`).join("\n"),
    `Today is ${context.today}.`
  ].filter((part) => part !== "").join("\n\n")

export const searchTurn = (input: {
  readonly question: string
  readonly evidence: Evidence
  readonly searchesLeft: number
  readonly searchesDone: ReadonlyArray<string>
}): string =>
  [
    `Question: ${input.question}`,
    input.searchesDone.length > 0
      ? `Searches already done:\n${input.searchesDone.map((line) => `- ${line}`).join("\n")}`
      : "",
    `Evidence so far:\n${input.evidence.render()}`,
    `You may run ${input.searchesLeft} more search${input.searchesLeft === 1 ? "" : "es"}. Tools:\n` +
    toolNames.map((name) => `- ${name}: ${toolDescriptions[name]}`).join("\n"),
    "Decide the next step and reply with one JSON object only:\n" +
    "- to search: {\"tool\": \"<tool name>\", \"query\": \"<what to look for>\", \"answer\": null}\n" +
    "- to answer (when the evidence suffices or more searching will not help): " +
    "{\"tool\": \"answer\", \"query\": null, \"answer\": \"<your full answer in markdown>\"}\n" +
    "Search with different words or for a related person, place or time rather than repeating a search."
  ].filter((part) => part !== "").join("\n\n")

export const answerTurn = (input: { readonly question: string; readonly evidence: Evidence }): string =>
  [
    `Question: ${input.question}`,
    `Evidence:\n${input.evidence.render()}`,
    "Answer the question now, in markdown, from this evidence only, following the directives and your disposition. " +
    "Do not mention evidence references such as [F1]."
  ].join("\n\n")

export const structureTurn = (input: {
  readonly question: string
  readonly answer: string
  readonly evidence: Evidence
  readonly schema: Record<string, unknown>
}): string =>
  [
    `Question: ${input.question}`,
    `Evidence:\n${input.evidence.render()}`,
    `Answer given:\n${input.answer}`,
    `Express this answer as one JSON value that matches this JSON Schema exactly:\n${JSON.stringify(input.schema)}`,
    "Reply with the JSON value only: no prose, no code fences."
  ].join("\n\n")

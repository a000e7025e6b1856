/**
 * What a training example of each schema type must look like, the hash that identifies a payload in transform
 * logs and lineage, and the conversation turns a payload stands for (used by retain and the exporters). Pure
 * functions: no database, no model.
 */
import { createHash } from "node:crypto"
import type { SchemaType } from "../domain/Dataset.ts"

export type JsonObject = Record<string, unknown>

export interface Turn {
  readonly role: string
  readonly content: string
}

/** Roles a fine-tuning chat format accepts; anything else would make an exported line unusable. */
export const chatRoles: ReadonlyArray<string> = ["system", "user", "assistant", "tool"]

/** A payload serialised larger than this is refused: it is one training example, not a document. */
export const maxPayloadChars = 200_000

export const normalizeSchemaType = (input: string): SchemaType =>
  input === "openai_chat" ? "chat_messages" : (input as SchemaType)

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const nonBlank = (value: unknown) => typeof value === "string" && value.trim() !== ""

/** The problems of one payload for the schema type (empty when it is valid), each naming the field. */
export const payloadProblems = (schemaType: SchemaType, payload: unknown): ReadonlyArray<string> => {
  if (!isObject(payload)) {
    return [
      `must be a JSON object, got ${Array.isArray(payload) ? "an array" : payload === null ? "null" : typeof payload}`
    ]
  }
  if (JSON.stringify(payload).length > maxPayloadChars) return [`must be at most ${maxPayloadChars} characters as JSON`]
  switch (schemaType) {
    case "chat_messages": {
      const messages = payload["messages"]
      if (!Array.isArray(messages) || messages.length === 0) return ["messages must be a non-empty array"]
      const problems: Array<string> = []
      messages.forEach((message, index) => {
        if (!isObject(message)) return void problems.push(`messages[${index}] must be an object with role and content`)
        if (!nonBlank(message["role"])) problems.push(`messages[${index}].role must be a non-empty string`)
        else if (!chatRoles.includes(message["role"] as string)) {
          problems.push(`messages[${index}].role must be one of ${chatRoles.join(", ")}`)
        }
        if (!nonBlank(message["content"])) problems.push(`messages[${index}].content must be a non-empty string`)
      })
      return problems
    }
    case "qa_pair":
      return [
        ...(nonBlank(payload["question"]) ? [] : ["question must be a non-empty string"]),
        ...(nonBlank(payload["answer"]) ? [] : ["answer must be a non-empty string"])
      ]
    case "custom":
      return Object.keys(payload).length === 0 ? ["must be a non-empty object"] : []
  }
}

/**
 * Whether a rewritten payload keeps the shape of the one it rewrites: the same roles in the same order for
 * chat, the same top-level keys for the other types. A transform may change wording, never structure or labels.
 */
export const structureChange = (schemaType: SchemaType, before: JsonObject, after: JsonObject): string | null => {
  if (schemaType === "chat_messages") {
    const roles = (payload: JsonObject) =>
      (payload["messages"] as Array<JsonObject>).map((message) => String(message["role"]))
    const was = roles(before)
    const now = roles(after)
    return was.join(",") === now.join(",")
      ? null
      : `the roles changed from [${was.join(", ")}] to [${now.join(", ")}]`
  }
  const was = Object.keys(before).sort()
  const now = Object.keys(after).sort()
  return was.join(",") === now.join(",") ? null : `the keys changed from [${was.join(", ")}] to [${now.join(", ")}]`
}

/** JSON with object keys sorted at every level, so equal payloads always serialise (and hash) the same. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (isObject(value)) {
    const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export const payloadHash = (payload: unknown): string =>
  createHash("sha256").update(canonicalJson(payload)).digest("hex")

/**
 * The conversation a payload stands for: chat messages as they are, a Q&A pair as a user question and an
 * assistant answer, and for custom payloads their own `messages` when they carry valid ones, else nothing.
 */
export const turnsOf = (schemaType: SchemaType, payload: JsonObject): ReadonlyArray<Turn> => {
  if (schemaType === "qa_pair") {
    return [
      { role: "user", content: String(payload["question"] ?? "") },
      { role: "assistant", content: String(payload["answer"] ?? "") }
    ]
  }
  if (schemaType === "custom" && payloadProblems("chat_messages", payload).length > 0) return []
  const messages = payload["messages"]
  return Array.isArray(messages)
    ? messages.filter(isObject).map((message) => ({
      role: String(message["role"] ?? ""),
      content: String(message["content"] ?? "")
    }))
    : []
}

/** Plain text a payload is retained as: readable turns, so fact extraction sees sentences rather than JSON. */
export const retainText = (schemaType: SchemaType, payload: JsonObject): string => {
  const turns = turnsOf(schemaType, payload)
  if (turns.length === 0) return JSON.stringify(payload, null, 2)
  return turns.map((turn) => `${turn.role}: ${turn.content}`).join("\n")
}

/**
 * The texts of a payload a model may rewrite, and putting rewritten texts back. A model never returns a whole
 * payload: it returns the texts in order, so roles, keys, labels and any other field stay exactly as they were
 * (chat: each message's `content`; Q&A: `question` and `answer`; custom: every string value).
 */
import type { SchemaType } from "../domain/Dataset.ts"
import type { JsonObject } from "./Payloads.ts"

type Path = ReadonlyArray<string | number>

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stringLeaves = (value: unknown, path: Path, out: Array<Path>) => {
  if (typeof value === "string") out.push(path)
  else if (Array.isArray(value)) value.forEach((item, index) => stringLeaves(item, [...path, index], out))
  else if (isObject(value)) { for (const key of Object.keys(value)) stringLeaves(value[key], [...path, key], out) }
}

/** Where the rewritable texts of the payload are, in a stable order. */
export const textPaths = (schemaType: SchemaType, payload: JsonObject): ReadonlyArray<Path> => {
  switch (schemaType) {
    case "chat_messages":
      return (payload["messages"] as ReadonlyArray<unknown>).map((_, index) => ["messages", index, "content"])
    case "qa_pair":
      return [["question"], ["answer"]]
    case "custom": {
      const out: Array<Path> = []
      stringLeaves(payload, [], out)
      return out
    }
  }
}

const read = (value: unknown, path: Path): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value)

export const textsOf = (schemaType: SchemaType, payload: JsonObject): ReadonlyArray<string> =>
  textPaths(schemaType, payload).map((path) => String(read(payload, path) ?? ""))

/** A copy of the payload with its texts replaced, or why the texts do not fit it. */
export const withTexts = (
  schemaType: SchemaType,
  payload: JsonObject,
  texts: ReadonlyArray<string>
): { readonly _tag: "ok"; readonly payload: JsonObject } | { readonly _tag: "mismatch"; readonly reason: string } => {
  const paths = textPaths(schemaType, payload)
  if (texts.length !== paths.length) {
    return { _tag: "mismatch", reason: `it returned ${texts.length} texts for the ${paths.length} of the example` }
  }
  const blank = texts.findIndex((text, index) =>
    text.trim() === "" && String(read(payload, paths[index]!) ?? "").trim() !== ""
  )
  if (blank >= 0) return { _tag: "mismatch", reason: `it returned an empty text ${blank + 1}` }
  const copy = structuredClone(payload)
  paths.forEach((path, index) => {
    const parent = read(copy, path.slice(0, -1)) as Record<string | number, unknown>
    parent[path[path.length - 1]!] = texts[index]
  })
  return { _tag: "ok", payload: copy }
}

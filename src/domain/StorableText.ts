/**
 * The text rules behind `http/TextHygiene`, for every place text enters from outside (HTTP bodies and queries, MCP tool
 * arguments, the `request` field of a file upload, text converted from files): what is cleaned and what is refused.
 */

/** Why an identifier is refused. */
export const refusal = "must not contain control characters (such as NUL) or unpaired UTF-16 surrogates"

const identifierProblem = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether an identifier carries what `refusal` describes. */
export const isUnfitIdentifier = (value: string) => identifierProblem.test(value)

/** Fields that name records: `id`, and any name ending in `_id` or `_ids`. */
export const isIdentifierKey = (key: string) => key === "id" || key.endsWith("_id") || key.endsWith("_ids")

/** Text as PostgreSQL can store it: without NUL, with each unpaired surrogate replaced by U+FFFD. */
export const storableText = (text: string): string => {
  const withoutNul = text.includes("\u0000") ? text.replaceAll("\u0000", "") : text
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed()
}

const maxDepth = 256

export type Scanned =
  | { readonly _tag: "Clean"; readonly value: unknown; readonly changed: boolean }
  | { readonly _tag: "Refused"; readonly field: string; readonly message: string }

/**
 * Walks a parsed JSON value: identifiers (the values of `isIdentifierKey` keys, or each string in them when they are
 * arrays) are refused when unfit; every other string and every key is made storable. `field` names the refused value
 * by its path, as validation errors do ("items.0.document_id").
 */
export const scanJson = (value: unknown, path: ReadonlyArray<string> = []): Scanned => {
  // No request of this API nests anywhere near this deep; a walk that followed any depth would overflow the stack.
  if (path.length > maxDepth) {
    const field = path.slice(0, 3).join(".") || "body"
    return { _tag: "Refused", field, message: `is nested more than ${maxDepth} levels deep` }
  }
  if (typeof value === "string") {
    const storable = storableText(value)
    return { _tag: "Clean", value: storable, changed: storable !== value }
  }
  if (Array.isArray(value)) {
    let changed = false
    const items: Array<unknown> = []
    for (const [index, item] of value.entries()) {
      const scanned = scanJson(item, [...path, String(index)])
      if (scanned._tag === "Refused") return scanned
      changed ||= scanned.changed
      items.push(scanned.value)
    }
    return { _tag: "Clean", value: changed ? items : value, changed }
  }
  if (value !== null && typeof value === "object") {
    let changed = false
    const entries: Array<[string, unknown]> = []
    for (const [key, item] of Object.entries(value)) {
      const field = [...path, key]
      if (isIdentifierKey(key)) {
        const unfit = (Array.isArray(item) ? item : [item]).findIndex((id) => typeof id === "string" && isUnfitIdentifier(id))
        if (unfit >= 0) {
          const name = Array.isArray(item) ? [...field, String(unfit)] : field
          return { _tag: "Refused", field: name.join("."), message: refusal }
        }
      }
      const scanned = scanJson(item, field)
      if (scanned._tag === "Refused") return scanned
      const storableKey = storableText(key)
      changed ||= scanned.changed || storableKey !== key
      entries.push([storableKey, scanned.value])
    }
    return { _tag: "Clean", value: changed ? Object.fromEntries(entries) : value, changed }
  }
  return { _tag: "Clean", value, changed: false }
}

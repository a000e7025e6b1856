/**
 * The text rules behind `http/TextHygiene`, for every place text enters from outside (HTTP bodies and queries, MCP tool
 * arguments, the `request` field of a file upload, text converted from files): what is cleaned and what is refused.
 */

import { hardMaxDepth } from "./JsonShape.ts"

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

export type Scanned =
  | { readonly _tag: "Clean"; readonly value: unknown; readonly changed: boolean }
  | { readonly _tag: "Refused"; readonly field: string; readonly message: string }

/** Array indexes stay numbers on the path stack: turned into text only when a refusal names its field. */
type Path = Array<string | number>

const tooDeep = (path: Path) => ({
  _tag: "Refused" as const,
  field: path.slice(0, 3).join(".") || "body",
  message: `is nested more than ${hardMaxDepth} levels deep`
})

/**
 * Walks a parsed JSON value: identifiers (the values of `isIdentifierKey` keys, or each string in them when they are
 * arrays) are refused when unfit; every other string and every key is made storable. `field` names the refused value
 * by its path, as validation errors do ("items.0.document_id"). Linear in the value's size: the path is one stack,
 * pushed and popped, and joined only to name a refusal.
 */
export const scanJson = (value: unknown): Scanned => walk(value, [])

const walk = (value: unknown, path: Path): Scanned => {
  // A walk that followed any depth would overflow the stack; bodies are capped far lower at the edge.
  if (path.length > hardMaxDepth) return tooDeep(path)
  if (typeof value === "string") {
    const storable = storableText(value)
    return { _tag: "Clean", value: storable, changed: storable !== value }
  }
  if (Array.isArray(value)) {
    let changed = false
    const items: Array<unknown> = new Array(value.length)
    for (let index = 0; index < value.length; index++) {
      path.push(index)
      const scanned = walk(value[index], path)
      path.pop()
      if (scanned._tag === "Refused") return scanned
      changed ||= scanned.changed
      items[index] = scanned.value
    }
    return { _tag: "Clean", value: changed ? items : value, changed }
  }
  if (value !== null && typeof value === "object") {
    let changed = false
    const entries: Array<[string, unknown]> = []
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key]
      if (isIdentifierKey(key)) {
        const unfit = (Array.isArray(item) ? item : [item]).findIndex((id) =>
          typeof id === "string" && isUnfitIdentifier(id)
        )
        if (unfit >= 0) {
          return {
            _tag: "Refused",
            field: [...path, key, ...(Array.isArray(item) ? [String(unfit)] : [])].join("."),
            message: refusal
          }
        }
      }
      path.push(key)
      const scanned = walk(item, path)
      path.pop()
      if (scanned._tag === "Refused") return scanned
      const storableKey = storableText(key)
      changed ||= scanned.changed || storableKey !== key
      entries.push([storableKey, scanned.value])
    }
    return { _tag: "Clean", value: changed ? Object.fromEntries(entries) : value, changed }
  }
  return { _tag: "Clean", value, changed: false }
}

export type CleanedText =
  | { readonly _tag: "Clean"; readonly text: string; readonly changed: boolean }
  | { readonly _tag: "Refused"; readonly field: string; readonly message: string }
  /** Not JSON: the route's own decoding answers for it. */
  | { readonly _tag: "NotJson" }

/**
 * `scanJson`'s rules applied to JSON text, without parsing it into values: one pass that tracks keys (for identifiers
 * and for naming a refusal) and rewrites only the strings that change, so the route parses the body once. A string
 * token is decoded only when it holds an escape or a DEL, and then on its own.
 */
export const cleanJsonText = (text: string): CleanedText => new TextWalk(text).run()

type Slot = "plain" | "id" | "idElement"

/** Whether the four hex digits at `at` are 0000 or a surrogate (D800–DFFF). */
const mayBeUnstorable = (text: string, at: number) => {
  const digits = text.slice(at, at + 4)
  return digits === "0000" || /^d[89a-f]/i.test(digits)
}

/** Digits, letters, `-`, `+` and `.`: what numbers and literals are made of (NaN past the end is none of them). */
const isScalarChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === 0x2d || c === 0x2b || c === 0x2e

class TextWalk {
  private i = 0
  private readonly path: Path = []
  private readonly edits: Array<{ readonly start: number; readonly end: number; readonly text: string }> = []
  private outcome: CleanedText | undefined
  /** The next backslash at or after the last search (2³²−1 when there is none). */
  private backslash = -1
  private readonly text: string

  constructor(text: string) {
    this.text = text
  }

  run(): CleanedText {
    const text = this.text
    this.space()
    if (!this.value("plain")) return this.outcome ?? { _tag: "NotJson" }
    this.space()
    if (this.i < text.length) return { _tag: "NotJson" }
    if (this.edits.length === 0) return { _tag: "Clean", text, changed: false }
    const parts: Array<string> = []
    let at = 0
    for (const edit of this.edits) {
      parts.push(text.slice(at, edit.start), edit.text)
      at = edit.end
    }
    parts.push(text.slice(at))
    return { _tag: "Clean", text: parts.join(""), changed: true }
  }

  private space() {
    const text = this.text
    let c = text.charCodeAt(this.i)
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++this.i)
  }

  private fail(outcome: CleanedText = { _tag: "NotJson" }) {
    this.outcome ??= outcome
    return false
  }

  /** One value at `i`; false when the walk ends (not JSON, or a refusal in `outcome`). */
  private value(slot: Slot): boolean {
    if (this.path.length > hardMaxDepth) return this.fail(tooDeep(this.path))
    const c = this.text.charCodeAt(this.i)
    if (c === 0x22) return this.string(slot) !== undefined
    if (c === 0x7b) return this.object()
    if (c === 0x5b) return this.array(slot === "id" ? "idElement" : "plain")
    const start = this.i
    // A number or literal: its characters, checked by the route's parse.
    while (isScalarChar(this.text.charCodeAt(this.i))) this.i++
    return this.i > start || this.fail()
  }

  /**
   * A string token at `i`: refused if an unfit identifier, rewritten if not storable. Answers its decoded text (keys
   * need it). Only an escape of NUL or of a surrogate can make a string unstorable (the text was UTF-8, so it holds
   * no raw lone surrogate), so other strings are decoded only when they are keys or identifiers.
   */
  private string(slot: Slot, isKey = false): string | undefined {
    const text = this.text
    const start = this.i
    let escaped = false
    let unstorable = false
    // Native searches for the closing quote and the next backslash; the backslash position is kept between strings.
    let i = start + 1
    for (;;) {
      const quote = text.indexOf("\"", i)
      if (quote < 0) return void this.fail()
      if (this.backslash < i) this.backslash = text.indexOf("\\", i) >>> 0
      if (this.backslash > quote) {
        i = quote
        break
      }
      escaped = true
      if (text.charCodeAt(this.backslash + 1) === 0x75 && mayBeUnstorable(text, this.backslash + 2)) unstorable = true
      i = this.backslash + 2
    }
    // DEL needs no escape, and only an identifier or a key is affected by it.
    if (!escaped && (slot !== "plain" || isKey)) escaped = text.slice(start + 1, i).includes("\u007f")
    this.i = i + 1
    if (!unstorable && (!escaped || (slot === "plain" && !isKey))) return text.slice(start + 1, i)
    let decoded: string
    try {
      decoded = JSON.parse(text.slice(start, this.i)) as string
    } catch {
      return void this.fail()
    }
    if (slot !== "plain" && isUnfitIdentifier(decoded)) {
      return void this.fail({ _tag: "Refused", field: this.path.join("."), message: refusal })
    }
    if (unstorable) {
      const storable = storableText(decoded)
      if (storable !== decoded) this.edits.push({ start, end: this.i, text: JSON.stringify(storable) })
    }
    return decoded
  }

  private object(): boolean {
    this.i++
    this.space()
    if (this.text.charCodeAt(this.i) === 0x7d) {
      this.i++
      return true
    }
    for (;;) {
      if (this.text.charCodeAt(this.i) !== 0x22) return this.fail()
      const key = this.string("plain", true)
      if (key === undefined) return false
      this.space()
      if (this.text.charCodeAt(this.i) !== 0x3a) return this.fail()
      this.i++
      this.space()
      this.path.push(key)
      const ok = this.value(isIdentifierKey(key) ? "id" : "plain")
      this.path.pop()
      if (!ok) return false
      this.space()
      const c = this.text.charCodeAt(this.i++)
      if (c === 0x7d) return true
      if (c !== 0x2c) return this.fail()
      this.space()
    }
  }

  private array(slot: Slot): boolean {
    this.i++
    this.space()
    if (this.text.charCodeAt(this.i) === 0x5d) {
      this.i++
      return true
    }
    for (let index = 0;; index++) {
      this.path.push(index)
      const ok = this.value(slot)
      this.path.pop()
      if (!ok) return false
      this.space()
      const c = this.text.charCodeAt(this.i++)
      if (c === 0x5d) return true
      if (c !== 0x2c) return this.fail()
      this.space()
    }
  }
}

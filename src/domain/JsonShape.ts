/**
 * Caps on the shape of a JSON text — nesting depth and elements (values and keys) — checked by one linear pass over
 * the raw bytes or characters, before anything parses it: a hostile body is refused before `JSON.parse` builds a
 * single object. The scanner is incremental (fed chunk by chunk as a body arrives) and never allocates per element.
 * It does not validate JSON: a malformed text within the caps is left to whoever parses it.
 */

export interface JsonLimits {
  /** Deepest nesting of arrays and objects. */
  readonly maxDepth: number
  /** Most elements: every string (keys included), number, literal, array and object counts once. */
  readonly maxElements: number
}

/**
 * Defaults. No request of this API nests beyond a dozen levels; a 10k-item retain batch with tags and metadata is about
 * 150k elements, and `JSON.parse` of 1M elements costs 30–80 ms of one core.
 */
export const defaultJsonLimits: JsonLimits = { maxDepth: 64, maxElements: 1_000_000 }

/** The deepest nesting any walker here follows whatever is configured: beyond it a recursive walk risks the stack. */
export const hardMaxDepth = 1_000

export type ShapeProblem =
  | { readonly _tag: "TooDeep"; readonly limit: number }
  | { readonly _tag: "TooManyElements"; readonly limit: number }

export const shapeMessage = (problem: ShapeProblem): string =>
  problem._tag === "TooDeep"
    ? `is nested more than ${problem.limit} levels deep`
    : `has more than ${problem.limit} elements (values and keys)`

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)
const hexValue = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57)

/**
 * The incremental scanner. Structural characters are ASCII and UTF-8 continuation bytes never are, so bytes and
 * UTF-16 code units scan alike. Besides the caps it notes whether any string may need `cleanJsonText`: an escape of
 * a control character, NUL or DEL, an unpaired surrogate escape, or a raw DEL (the only control character JSON
 * allows unescaped). Most bodies have none, and pass through the edge without a second look.
 */
export class JsonShapeScanner {
  private depth = 0
  private elements = 0
  private inString = false
  /** 0 outside an escape, 1 after `\`, 2–5 reading the four hex digits of `\u`. */
  private escape = 0
  private hex = 0
  private pendingHigh = false
  private expectValue = true
  /** Whether a string holds something `cleanJsonText` acts on. */
  mayNeedCleaning = false
  problem: ShapeProblem | undefined = undefined
  private readonly limits: JsonLimits

  constructor(limits: JsonLimits) {
    this.limits = limits
  }

  /**
   * Feeds the next chunk of bytes; answers the problem once a cap is passed (and stops looking). The state lives in
   * locals while a chunk is scanned, and inside a string (the bulk of most bodies) a tight loop skips to the next
   * quote, backslash or DEL: about 3 ns a byte.
   */
  push(chunk: Uint8Array): ShapeProblem | undefined {
    if (this.problem !== undefined) return this.problem
    const { maxDepth, maxElements } = this.limits
    let { depth, elements, inString, escape, hex, pendingHigh, expectValue, mayNeedCleaning } = this
    let problem: ShapeProblem | undefined
    const length = chunk.length
    for (let i = 0; i < length; i++) {
      let c = chunk[i]!
      if (inString) {
        if (escape === 0) {
          if (pendingHigh && c !== 0x5c) {
            pendingHigh = false
            mayNeedCleaning = true
          }
          while (c !== 0x22 && c !== 0x5c && c !== 0x7f && ++i < length) c = chunk[i]!
          if (i === length) break
          if (c === 0x5c) escape = 1
          else if (c === 0x22) inString = false
          else mayNeedCleaning = true
        } else if (escape === 1) {
          if (c === 0x75) {
            escape = 2
            hex = 0
            continue
          }
          escape = 0
          if (pendingHigh) {
            pendingHigh = false
            mayNeedCleaning = true
          }
          // \b \f \n \r \t: control characters, which an identifier may not carry.
          if (c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) mayNeedCleaning = true
        } else {
          hex = hex * 16 + (isHex(c) ? hexValue(c) : 0)
          if (++escape < 6) continue
          escape = 0
          if (hex >= 0xd800 && hex <= 0xdbff) {
            if (pendingHigh) mayNeedCleaning = true
            pendingHigh = true
          } else if (hex >= 0xdc00 && hex <= 0xdfff) {
            if (!pendingHigh) mayNeedCleaning = true
            pendingHigh = false
          } else {
            if (pendingHigh || hex < 0x20 || hex === 0x7f) mayNeedCleaning = true
            pendingHigh = false
          }
        }
        continue
      }
      switch (c) {
        case 0x22: // "
          inString = true
          expectValue = false
          elements++
          break
        case 0x5b: // [
        case 0x7b: // {
          expectValue = true
          elements++
          if (++depth > maxDepth) problem = { _tag: "TooDeep", limit: maxDepth }
          break
        case 0x5d: // ]
        case 0x7d: // }
          if (depth > 0) depth--
          expectValue = false
          break
        case 0x2c: // ,
        case 0x3a: // :
          expectValue = true
          break
        case 0x20:
        case 0x09:
        case 0x0a:
        case 0x0d:
          // Between top-level values (JSON lines) a new value may start.
          if (depth === 0) expectValue = true
          break
        default:
          // The first character of a number or literal; the rest of it follows with `expectValue` off.
          if (expectValue) {
            expectValue = false
            elements++
          }
      }
      if (elements > maxElements) problem ??= { _tag: "TooManyElements", limit: maxElements }
      if (problem !== undefined) break
    }
    this.depth = depth
    this.elements = elements
    this.inString = inString
    this.escape = escape
    this.hex = hex
    this.pendingHigh = pendingHigh
    this.expectValue = expectValue
    this.mayNeedCleaning = mayNeedCleaning
    this.problem = problem
    return problem
  }
}

/** The shape problem of a whole text (a multipart field, JSON lines), or `undefined` within the caps. */
export const shapeProblem = (text: string, limits: JsonLimits = defaultJsonLimits): ShapeProblem | undefined =>
  new JsonShapeScanner(limits).push(new TextEncoder().encode(text))

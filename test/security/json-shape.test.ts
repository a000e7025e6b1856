/**
 * The edge's body checks without a server: the shape scanner counts what `JSON.parse` would build (values and keys,
 * depth) from raw bytes fed in any chunking, and flags exactly the strings the text rules act on; `cleanJsonText`
 * gives the route the same value `scanJson` gives for the parsed body, or the same refusal.
 */
import { assert, describe, it } from "@effect/vitest"
import { JsonShapeScanner, shapeProblem } from "../../src/domain/JsonShape.ts"
import { cleanJsonText, scanJson } from "../../src/domain/StorableText.ts"

const unlimited = { maxDepth: 1_000, maxElements: Number.MAX_SAFE_INTEGER }

/** The scanner after `text`, fed in chunks of `size` bytes. */
const scanned = (text: string, size = 1 << 16) => {
  const scanner = new JsonShapeScanner(unlimited)
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += size) scanner.push(bytes.subarray(at, at + size))
  return scanner
}

/** Values and keys of a parsed value, each counted once. */
const census = (value: unknown): number =>
  Array.isArray(value)
    ? 1 + value.reduce((sum: number, item) => sum + census(item), 0)
    : value !== null && typeof value === "object"
    ? 1 + Object.values(value).reduce((sum: number, item) => sum + 1 + census(item), 0)
    : 1

const samples = [
  `{"items":[{"content":"a \\"quoted\\" \\\\ text","tags":["x","y"],"metadata":{"k":"v"}}],"async":true}`,
  `[1, -2.5e3, true, false, null, {"a": [ ], "b": { }, "c": [[["deep"]]]}]`,
  `{"q":"caf\u00e9 \\u00e9 \\ud83d\\ude00 💥","n":0}`,
  `"just a string"`,
  `42`
]

describe("JsonShapeScanner", () => {
  it("counts every value and key, and the nesting, whatever the chunking", () => {
    for (const text of samples) {
      const expected = census(JSON.parse(text))
      for (const size of [1, 3, 7, 1 << 16]) {
        const scanner = scanned(text, size) as unknown as { elements: number; problem: unknown }
        assert.strictEqual(scanner.elements, expected, `${text} in chunks of ${size}`)
        assert.isUndefined(scanner.problem)
      }
    }
  })

  it("refuses past the caps, naming which", () => {
    assert.deepStrictEqual(shapeProblem("[".repeat(65) + "]".repeat(65)), { _tag: "TooDeep", limit: 64 })
    assert.isUndefined(shapeProblem("[".repeat(64) + "]".repeat(64)))
    assert.deepStrictEqual(shapeProblem(`[${"0,".repeat(1_000_000)}0]`), { _tag: "TooManyElements", limit: 1_000_000 })
    // Brackets and commas inside strings are text, not structure.
    assert.isUndefined(shapeProblem(`["${"[[[[,,,,".repeat(100)}"]`, { maxDepth: 2, maxElements: 3 }))
  })

  it("flags exactly the strings the text rules act on", () => {
    const flagged = (text: string) => scanned(text, 2).mayNeedCleaning
    for (
      const text of [
        `"a\\u0000"`,
        `"\\ud800"`,
        `"\\udc00x"`,
        `"\\ud83d\\ud83d"`,
        `"a\\nb"`,
        `"\\t"`,
        `"\\u001f"`,
        `"\\u007f"`,
        `"\u007f"`
      ]
    ) {
      assert.isTrue(flagged(text), text)
    }
    for (const text of [`"plain"`, `"\\ud83d\\ude00"`, `"\\u00e9 \\" \\\\ \\/"`, `"💥"`, `{"a":1}`]) {
      assert.isFalse(flagged(text), text)
    }
  })
})

describe("cleanJsonText", () => {
  const cases = [
    `{"items":[{"content":"a\\u0000b","document_id":"x\\u0001"}]}`,
    `{"items":[{"content":"a\\u0000b","document_id":"ok"}]}`,
    `{"memory_ids":["a","b\\nc"]}`,
    `{"k\\u0000ey":"\\ud800x","t":["\\udfff"]}`,
    `{"q":"\\ud83d\\ude00 \\ud83d\\u0000\\ude00"}`,
    `{"id":"\u007f"}`,
    `{"id":{"x":"\\u0000"}}`,
    `{"document\\u005fid":"a\\tb"}`,
    `{"a":{"b":{"c_ids":["ok","\\udc00"]}}}`,
    `{"__proto__":{"x":"\\u0000"}}`
  ]

  it("answers what scanJson answers for the parsed body, rewriting only the strings that change", () => {
    for (const text of cases) {
      const expected = scanJson(JSON.parse(text))
      const cleaned = cleanJsonText(text)
      if (expected._tag === "Refused") {
        assert.deepStrictEqual(cleaned, expected, text)
        continue
      }
      assert.strictEqual(cleaned._tag, "Clean", text)
      if (cleaned._tag !== "Clean") continue
      assert.deepStrictEqual(JSON.parse(cleaned.text), expected.value, text)
      assert.strictEqual(cleaned.changed, expected.changed, text)
    }
  })

  it("leaves text that is not JSON to the route", () => {
    for (const text of [`{"a":1}x`, `{"a":}`, `[`, ``]) assert.deepStrictEqual(cleanJsonText(text), { _tag: "NotJson" })
    // A bad escape in a string no rule reads is not even decoded: the route's parse refuses it, unchanged.
    assert.deepStrictEqual(cleanJsonText(`{"a":"\\x"}`), { _tag: "Clean", text: `{"a":"\\x"}`, changed: false })
  })

  it("names a refusal by its path, deep in a large body", () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ content: `line ${i}\n`, document_id: `doc-${i}` }))
    items[17_001] = { content: "x", document_id: "doc\u0000" }
    assert.deepStrictEqual(cleanJsonText(JSON.stringify({ items })), {
      _tag: "Refused",
      field: "items.17001.document_id",
      message: "must not contain control characters (such as NUL) or unpaired UTF-16 surrogates"
    })
  })
})

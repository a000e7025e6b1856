/**
 * The hostile inputs the fuzz tests draw from: strings (NUL and control characters, lone surrogates, 2 MB),
 * numbers beyond every range (some only expressible as raw JSON tokens), wrong types, deep nesting, malformed
 * JSON bodies and path or query values that are already percent-encoded (`%00`, `%2F..%2F`, broken escapes).
 * It knows nothing of routes; the request builders pick from it by the type the schema expects.
 */
import fc from "fast-check"
import type { JsonSchema } from "./JsonSchemaArbitrary.ts"

/** A JSON fragment written into the body as is: numbers JavaScript cannot hold, deep nesting, duplicate keys. */
export class RawJson {
  readonly raw: string
  constructor(raw: string) {
    this.raw = raw
  }
  toJSON() {
    return `${marker}${rawFragments.push(this.raw) - 1}${marker}`
  }
}

const marker = "\uE000raw\uE000"
const rawFragments: Array<string> = []

/** JSON text of a value that may hold `RawJson` fragments (placed where their marker string was). */
export const serialize = (value: unknown): string => {
  rawFragments.length = 0
  const text = JSON.stringify(value) ?? "null"
  return text.replace(new RegExp(`"${marker}(\\d+)${marker}"`, "g"), (_, index) => rawFragments[Number(index)]!)
}

const twoMegabytes = "x".repeat(2 * 1024 * 1024)
const deepArray = (depth: number) => new RawJson("[".repeat(depth) + "]".repeat(depth))
const deepObject = (depth: number) => new RawJson(`{"not":`.repeat(depth) + `{"tags":["a"]}` + "}".repeat(depth))

export const hostileStrings: ReadonlyArray<string> = [
  "",
  "   ",
  "\u0000",
  "hello\u0000world",
  "\u0001\u0002\u0007\u001b[31m\u007f",
  "line\r\nbreak\u2028\u2029",
  "\ud800",
  "a\udc00b",
  "\udbff",
  "\ufeffbom",
  "\u202eright-to-left",
  "💥".repeat(200),
  "x".repeat(300),
  twoMegabytes,
  "%00",
  "../../../etc/passwd",
  "'; DROP TABLE banks; --",
  "\\",
  "<script>alert(1)</script>",
  "http://169.254.169.254/latest/meta-data/",
  "file:///etc/passwd",
  "+275760-09-13T00:00:00.001Z",
  "-004714-01-01T00:00:00Z",
  "0000-01-01T00:00:00Z",
  "9999-99-99T99:99:99Z",
  "2024-02-30",
  "NaN",
  "-1"
]

/** Numbers past every bound; the raw ones cannot be written by JSON.stringify. */
export const hostileNumbers: ReadonlyArray<unknown> = [
  -1,
  0,
  1.5,
  -2147483649,
  2147483648,
  4294967296,
  Number.MAX_SAFE_INTEGER,
  2 ** 63,
  1e308,
  -1e308,
  new RawJson("1e400"),
  new RawJson("-1e400"),
  new RawJson("123456789012345678901234567890"),
  new RawJson("-0"),
  new RawJson("1e-400"),
  new RawJson("9007199254740993")
]

export const wrongTypes: ReadonlyArray<unknown> = [null, true, 42, "text", [], {}, [null], { "": "" }, [[["nested"]]]]

export const deepNesting: ReadonlyArray<unknown> = [deepArray(5000), deepObject(3000)]

/** A hostile value for a slot of the given schema: mostly one of its own type, sometimes any wrong type. */
export const hostileFor = (schema: JsonSchema): fc.Arbitrary<unknown> => {
  const types = new Set<string>(
    [schema.type, ...((schema.anyOf ?? []) as Array<JsonSchema>).map((branch) => branch.type)].filter(Boolean)
  )
  const suited: Array<unknown> = []
  if (types.has("string")) suited.push(...hostileStrings)
  if (Array.isArray(schema.enum)) {
    suited.push("unknown-enum-value", `${schema.enum[0]}\u0000`, String(schema.enum[0]).toUpperCase())
  }
  if (types.has("integer") || types.has("number")) suited.push(...hostileNumbers)
  if (types.has("array")) {
    suited.push(
      [],
      Array.from({ length: 10_001 }, () => "x"),
      [null],
      hostileStrings.slice(2, 10)
    )
  }
  if (types.has("object")) {
    suited.push({}, { "a\u0000b": "x", "\ud800": "y" }, new RawJson(`{"__proto__":{"polluted":true}}`))
  }
  const anything = fc.constantFrom(...wrongTypes, ...deepNesting, ...hostileStrings, ...hostileNumbers)
  return suited.length === 0 ? anything : fc.oneof({ arbitrary: fc.constantFrom(...suited), weight: 3 }, anything)
}

/** Property names a request body does not expect. */
export const extraKeys: ReadonlyArray<string> = [
  "extra",
  "__proto__",
  "constructor",
  "a\u0000b",
  "\ud800",
  "",
  "k".repeat(300)
]

/** Whole bodies that are not the JSON object a route expects (strings; byte bodies are built from the sample). */
export const malformedBodies: ReadonlyArray<string> = [
  "",
  "{",
  "}",
  `{"a":`,
  "[",
  "nul",
  "'single'",
  `{"items": [}`,
  "{}x",
  "null",
  "[]",
  `"text"`,
  "42",
  "true",
  `{"a":1,"a":2}`,
  "\ufeff{}",
  `{"__proto__":{"polluted":true}}`,
  `{"query":"\\ud800"}`,
  `{"content":"\\u0000"}`,
  "[".repeat(100_000) + "]".repeat(100_000)
]

export const hostileContentTypes: ReadonlyArray<string | undefined> = [
  undefined,
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "multipart/form-data",
  "application/xml"
]

/**
 * Path segments, already percent-encoded as they go on the wire: NUL, traversal, broken escapes, an encoded lone
 * surrogate, 300 characters, numbers out of range. `near` adds variants of a bank id that must not reach it.
 */
export const hostileSegments = (near: string): ReadonlyArray<string> => [
  "%00",
  "abc%00",
  "%2F..%2F",
  `..%2F..%2Fbanks%2F${near}`,
  "%2e%2e",
  "a".repeat(300),
  "%C3%A9".repeat(300),
  "%20",
  "%0A",
  "%01",
  "%7F",
  "%ED%A0%80",
  "%zz",
  "%",
  "%C0%AF",
  "-1",
  "99999999999999999999",
  "1e308",
  "NaN",
  "00000000-0000-0000-0000-000000000000",
  "%27%3B%20DROP%20TABLE%20banks%3B--",
  `${near}%00`,
  `${near}%2F..%2F${near}`,
  `${near}%20`,
  `%20${near}`,
  near.toUpperCase(),
  `${near}.`
]

/** Query values, already percent-encoded. */
export const hostileQueryValues: ReadonlyArray<string> = [
  "",
  "-1",
  "0",
  "1.5",
  "1e308",
  "-1e308",
  "99999999999999999999",
  "NaN",
  "Infinity",
  "0x10",
  "abc",
  "unknown-enum-value",
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%zz",
  "%2F..%2F",
  "a".repeat(300),
  "x".repeat(4000)
]

/**
 * Bodies past the edge's caps (issue 33), sent whole to every route that reads a JSON body while /health is timed:
 * a declared length far over the byte cap (only its first 64 KiB sent), 1.2M elements, 100k levels of nesting.
 */
export const capBodies: ReadonlyArray<
  { readonly name: string; readonly body: Uint8Array; readonly declared?: number }
> = [
  { name: "declares 2 GiB", body: new Uint8Array(64 * 1024).fill(0x20), declared: 2 ** 31 },
  { name: "1.2M elements", body: Buffer.from(`[${"0,".repeat(1_200_000)}0]`) },
  { name: "100k deep", body: Buffer.from(`{"items":${"[".repeat(100_000)}${"]".repeat(100_000)}}`) }
]

/**
 * Globs that would take exponential time in a backtracking matcher: `*a` twenty-one times then `b` (past the wildcard
 * cap: refused), the same within the cap (matched by automata), and character sets of the same shape, against paths
 * made of `a`s that almost match.
 */
export const pathologicalGlobs: ReadonlyArray<string> = [
  `${"*a".repeat(21)}*b`,
  `${"*a".repeat(15)}b`,
  `${"[a]*".repeat(15)}b`,
  `${"?".repeat(16)}*b`
]
export const almostMatchingPaths: ReadonlyArray<string> = [`src/${"a".repeat(200)}.ts`, `${"a/".repeat(100)}a.ts`]

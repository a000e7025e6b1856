/** The streaming parser of the wink-embeddings JSON, on small documents of the package's shape. */
import { assert, describe, it } from "@effect/vitest"
import { WinkFormatError, WinkVectorsParser } from "../../../../layers/models/embeddings/WinkVectorsParser.ts"
import { winkDocument } from "./WinkFixture.ts"

const parseInChunks = (text: string, chunkSize: number) => {
  const bytes = new TextEncoder().encode(text)
  const parser = new WinkVectorsParser()
  for (let start = 0; start < bytes.length; start += chunkSize) parser.push(bytes.subarray(start, start + chunkSize))
  return parser.finish()
}

const rows: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
  ["the", [0.5, -1.25, 3]],
  ["\\", [1e-7, -2.5e21, 0.125]],
  ["caf\u00e9 \"au\" lait", [-0.000001, 7, -8.75]]
]

describe("WinkVectorsParser", () => {
  it("reads words in order and places each vector at its word's row, whatever the chunk boundaries", () => {
    for (const chunkSize of [1, 2, 7, 4096]) {
      const parsed = parseInChunks(winkDocument(rows), chunkSize)
      assert.deepStrictEqual(parsed.words, rows.map(([word]) => word))
      assert.strictEqual(parsed.dimensions, 3)
      assert.deepStrictEqual(Array.from(parsed.matrix), rows.flatMap(([, vector]) => vector.map(Math.fround)))
    }
  })

  it("rejects a vector that points at another word", () => {
    const broken = winkDocument(rows).replace(
      `"the":[0.5,-1.25,3,${Math.hypot(0.5, -1.25, 3)},0]`,
      `"the":[0.5,-1.25,3,1,1]`
    )
    assert.throws(() => parseInChunks(broken, 64), WinkFormatError)
  })

  it("rejects a document whose words have no vectors", () => {
    const truncated = winkDocument(rows).replace(/"vectors":\{.*\},"unkVector"/, `"vectors":{},"unkVector"`)
    assert.throws(() => parseInChunks(truncated, 64), /found 0 vectors for 3 words/)
  })

  it("rejects a document cut short", () => {
    const text = winkDocument(rows)
    assert.throws(() => parseInChunks(text.slice(0, text.length - 20), 64), /ends early/)
  })
})

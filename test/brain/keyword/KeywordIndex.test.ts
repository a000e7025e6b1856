/**
 * The in-memory keyword index on its own: BM25 ranking (rare terms weigh more, shorter memories win ties of
 * terms), the type filter, depth, the id tie-break, appends that skip memories already indexed, and removals
 * (tombstones) that leave every search exactly as a fresh build of the live memories would answer it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { IndexedMemory } from "../../../src/brain/keyword/KeywordIndex.ts"
import { KeywordIndex } from "../../../src/brain/keyword/KeywordIndex.ts"
import { stepsOf } from "../../support/SlicedSteps.ts"

const memory = (
  id: string,
  seq: number,
  lexemes: Array<string>,
  factType = "world",
  tags: Array<string> = []
): IndexedMemory => ({
  id,
  seq,
  factType,
  tags,
  lexemes
})
const words = (lexeme: string) => [{ lexeme, boost: 1 }]

describe("KeywordIndex", () => {
  const corpus = [
    memory("a", 1, ["paint", "lake", "sunris"]),
    memory("b", 2, ["paint", "hous"]),
    memory("c", 3, ["cook", "lasagna", "dinner", "parti", "friend", "paint"]),
    memory("d", 4, ["dog", "adopt"], "experience"),
    memory("e", 5, ["lake", "swim"])
  ]

  it("ranks by BM25: a rare term outweighs a common one, and shorter memories come first", () => {
    const index = KeywordIndex.build(corpus)
    const ranked = index.search([{ lexeme: "paint", boost: 1 }, { lexeme: "sunris", boost: 1 }], {
      types: ["world"],
      depth: 10
    })
    assert.deepStrictEqual(ranked.map((c) => c.id), ["a", "b", "c"])
    assert.isAbove(ranked[0]!.score, ranked[1]!.score)
    // b and c share only "paint"; b is shorter.
    assert.isAbove(ranked[1]!.score, ranked[2]!.score)
  })

  it("keeps only the requested types and cuts to the depth", () => {
    const index = KeywordIndex.build(corpus)
    assert.deepStrictEqual(index.search(words("dog"), { types: ["world"], depth: 10 }), [])
    assert.deepStrictEqual(index.search(words("dog"), { types: ["experience"], depth: 10 }).map((c) => c.id), ["d"])
    assert.strictEqual(index.search(words("paint"), { types: ["world"], depth: 2 }).length, 2)
    assert.deepStrictEqual(index.search(words("unknown"), { types: ["world"], depth: 10 }), [])
  })

  it("an expansion term counts with its lower boost, and a repeated term once", () => {
    const index = KeywordIndex.build(corpus)
    const own = index.search(words("lake"), { types: ["world"], depth: 10 })
    const expanded = index.search([{ lexeme: "lake", boost: 1 }, { lexeme: "swim", boost: 0.3 }, {
      lexeme: "lake",
      boost: 1
    }], {
      types: ["world"],
      depth: 10
    })
    assert.deepStrictEqual(expanded.map((c) => c.id), ["e", "a"])
    assert.closeTo(expanded.find((c) => c.id === "a")!.score, own.find((c) => c.id === "a")!.score, 1e-9)
  })

  it("breaks score ties by id and returns the best k of many matches", () => {
    const many = Array.from({ length: 500 }, (_, i) => memory(`m${String(499 - i).padStart(3, "0")}`, i + 1, ["same"]))
    const index = KeywordIndex.build(many)
    assert.deepStrictEqual(index.search(words("same"), { types: ["world"], depth: 3 }).map((c) => c.id), [
      "m000",
      "m001",
      "m002"
    ])
  })

  it("breaks ties between UUIDs exactly as their strings order, prefixes shared or not, other ids mixed in", () => {
    const ids = [
      ...Array.from({ length: 300 }, () => crypto.randomUUID()),
      "0000abcd-0000-4000-8000-000000000002",
      "0000abcd-0000-4000-8000-000000000001",
      "0000abcd-0001-4000-8000-000000000000",
      "0000ABCD-0000-4000-8000-000000000000",
      "0000abcd",
      "legacy-id"
    ]
    const index = KeywordIndex.build(ids.map((id, i) => memory(id, i + 1, ["same"])))
    const expected = [...ids].sort((x, y) => (x < y ? -1 : 1))
    assert.deepStrictEqual(
      index.search(words("same"), { types: ["world"], depth: 40 }).map((c) => c.id),
      expected.slice(0, 40)
    )
    assert.deepStrictEqual(index.search(words("same"), { types: ["world"], depth: 400 }).map((c) => c.id), expected)
  })

  it("appends new memories, skipping ones already indexed, and scores are not left behind between searches", () => {
    const index = KeywordIndex.build(corpus.slice(0, 2))
    index.append(corpus)
    assert.strictEqual(index.size, 5)
    assert.strictEqual(index.maxSeq, 5)
    const first = index.search(words("paint"), { types: ["world"], depth: 10 })
    const second = index.search(words("paint"), { types: ["world"], depth: 10 })
    assert.deepStrictEqual(first, second)
    assert.strictEqual(first.length, 3)
  })

  it("after any sequence of appends, removals, rewrites and compactions, answers as a fresh build of the live memories", () => {
    const vocabulary = ["paint", "lake", "dog", "swim", "cook", "dinner", "walk", "park", "read", "book"]
    const draft = fc.record({
      lexemes: fc.uniqueArray(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 6 }),
      factType: fc.constantFrom("world", "experience", "observation"),
      tags: fc.subarray(["a", "b"])
    })
    const operation = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant("append" as const),
          drafts: fc.array(draft, { minLength: 1, maxLength: 5 })
        })
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("rewrite" as const), pick: fc.nat(), draft }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("compact" as const) }) }
    )
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 25 }), fc.subarray(vocabulary, { minLength: 1 }), (ops, query) => {
        let index = KeywordIndex.build([])
        const live = new Map<string, IndexedMemory>()
        let next = 0
        for (const op of ops) {
          const ids = [...live.keys()]
          if (op.kind === "append") {
            const added = op.drafts.map((d) =>
              memory(`m${String(next++).padStart(4, "0")}`, next, d.lexemes, d.factType, d.tags)
            )
            added.forEach((m) => live.set(m.id, m))
            index.append(added)
          } else if (op.kind === "remove" && ids.length > 0) {
            const id = ids[op.pick % ids.length]!
            live.delete(id)
            assert.isTrue(index.remove(id))
          } else if (op.kind === "rewrite" && ids.length > 0) {
            const id = ids[op.pick % ids.length]!
            const rewritten = memory(id, live.get(id)!.seq, op.draft.lexemes, op.draft.factType, op.draft.tags)
            live.set(id, rewritten)
            index.remove(id)
            index.append([rewritten])
          } else if (op.kind === "compact") {
            index = index.compacted()
          }
        }
        const fresh = KeywordIndex.build(live.values())
        assert.strictEqual(index.size, fresh.size)
        const terms = query.map((lexeme, k) => ({ lexeme, boost: k === 0 ? 1 : 0.3 }))
        for (const types of [["world", "experience"], ["observation"]]) {
          for (const tags of [undefined, (t: ReadonlyArray<string>) => t.includes("a")]) {
            assert.deepStrictEqual(
              index.search(terms, { types, depth: 8, tags }),
              fresh.search(terms, { types, depth: 8, tags })
            )
          }
        }
      }),
      { numRuns: 300 }
    )
  })

  it("flattens for a brain file in slices, with tombstones, into the same parts as in one piece", () => {
    const vocabulary = Array.from({ length: 3_000 }, (_, n) => `w${n}`)
    const many = Array.from(
      { length: 30_000 },
      (_, n) =>
        memory(`m${n}`, n + 1, [vocabulary[n % 3_000]!, vocabulary[(n * 7) % 3_000]!, vocabulary[(n * 13) % 3_000]!])
    )
    const index = KeywordIndex.build(many)
    for (let n = 0; n < 30_000; n += 3) index.remove(`m${n}`)
    const whole = index.toParts()
    const { pauses, value } = stepsOf(index.toPartsSliced())
    assert.isAbove(pauses, 4, "it yields between slices")
    assert.deepStrictEqual(value, whole)
    assert.strictEqual(whole.ids.length, 20_000)
  })
})

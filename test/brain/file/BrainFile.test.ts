/**
 * The `.brain` file on its own: a keyword index, graph and memory records written and read back answer every search
 * and read exactly as the originals (tombstones included, which the file compacts away), the v1 fixture opens, and a file whose
 * checksums are valid but whose arrays do not fit together is refused rather than installed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import {
  readBrainFile,
  readingBrainFile,
  summarize,
  writeBrainFile,
  writingBrainFile
} from "../../../src/brain/file/BrainFile.ts"
import { BrainFileInvalid, open } from "../../../src/brain/file/BrainFormat.ts"
import { GraphSnapshot } from "../../../src/brain/graph/GraphSnapshot.ts"
import { KeywordIndex } from "../../../src/brain/keyword/KeywordIndex.ts"
import { MemoryRecords } from "../../../src/brain/records/MemoryRecords.ts"
import { recordsFromParts, recordsToParts } from "../../../src/brain/records/RecordParts.ts"
import { plainMemory } from "../../support/MemoryInputs.ts"
import { stepsOf } from "../../support/SlicedSteps.ts"

const lexicon = ["tea", "lake", "paint", "dog", "swim", "café", "東京", "run"]
const types = ["world", "experience", "observation"]

const content = (graph: GraphSnapshot, keywords: KeywordIndex, records = new MemoryRecords(3)) => ({
  bankId: "unit",
  generatedAt: "2026-01-01T00:00:00.000Z",
  mode: "incremental" as const,
  hardwareTier: "balanced",
  predictionMode: "histogram",
  modelSignature: "test",
  embeddingModel: null,
  dataVersion: { memories: keywords.size, seqMark: 9, changeMark: 2 },
  graph: { ids: graph.ids, offsets: graph.offsets, targets: graph.targets, weights: graph.weights, types: graph.types },
  keywords: keywords.toParts(),
  records: recordsToParts(records),
  mentalModels: [],
  memories: [],
  activity: Uint8Array.from([1, 2, 3])
})

describe("brain file", () => {
  it("round-trips the keyword index and graph: every search answers as before", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            words: fc.uniqueArray(fc.constantFrom(...lexicon), { minLength: 1, maxLength: 4 }),
            type: fc.constantFrom(...types),
            tag: fc.constantFrom("a", "b", "")
          }),
          { minLength: 1, maxLength: 30 }
        ),
        fc.array(fc.nat(29), { maxLength: 8 }),
        (rows, removals) => {
          const keywords = KeywordIndex.build(rows.map((row, i) => ({
            id: `m-${i}`,
            seq: i + 1,
            factType: row.type,
            tags: row.tag === "" ? [] : [row.tag],
            lexemes: row.words
          })))
          const records = new MemoryRecords(3)
          records.nameEntities([["e-a", "Alice"], ["e-b", "Bob"]])
          records.addChunks([["c-1", { chunkIndex: 0, text: "the first chunk" }]])
          records.upsert(rows.map((row, i) => ({
            id: `m-${i}`,
            seq: i + 1,
            text: row.words.join(" "),
            factType: row.type,
            context: i % 3 === 0 ? null : `context ${i}`,
            occurredStart: i % 2 === 0 ? null : Date.UTC(2024, 0, i + 1),
            occurredEnd: null,
            mentionedAt: Date.UTC(2024, 1, i + 1),
            createdAt: Date.UTC(2025, 0, 1),
            documentId: i % 4 === 0 ? "doc" : null,
            chunkId: i % 4 === 0 ? "c-1" : null,
            metadata: i % 5 === 0 ? { turn: String(i) } : null,
            tags: row.tag === "" ? [] : [row.tag],
            sourceFactIds: row.type === "observation" ? ["m-0"] : null,
            confidence: i % 2 === 0 ? 0.5 : null,
            supersededBy: i > 0 && i % 7 === 0 ? "m-0" : null,
            expiresAt: i % 3 === 1 ? Date.UTC(2026, 0, i + 1) : null,
            entityIds: i % 2 === 0 ? ["e-a"] : ["e-a", "e-b"],
            embedding: i % 6 === 5 ? null : Float32Array.from([1, i, -i / 3])
          })))
          for (const i of removals) {
            keywords.remove(`m-${i}`)
            records.remove(`m-${i}`)
          }
          const ids = rows.map((_, i) => `m-${i}`)
          const graph = GraphSnapshot.build({
            nodeIds: ids,
            links: rows.slice(1).map((_, i) => ({
              fromId: ids[i]!,
              toId: ids[i + 1]!,
              linkType: "temporal",
              weight: 0.5 + i / 100
            }))
          })
          const file = writeBrainFile(content(graph, keywords, records))
          const read = readBrainFile(open(file, 1e9))
          const restored = KeywordIndex.fromParts(read.keywords!)
          const restoredRecords = recordsFromParts(read.records!)
          assert.strictEqual(restoredRecords.size, records.size)
          for (const id of ids) assert.deepStrictEqual(restoredRecords.row(id), records.row(id))
          const scope = { types, tags: (t: ReadonlyArray<string>) => !t.includes("b") }
          assert.deepStrictEqual(
            restoredRecords.nearest(Float32Array.from([1, 2, -1]), scope, 10),
            records.nearest(Float32Array.from([1, 2, -1]), scope, 10)
          )
          // Expiries survive the file: the same memories are gone at the same instant.
          const later = { ...scope, now: Date.UTC(2026, 0, 12) }
          assert.deepStrictEqual(
            restoredRecords.nearest(Float32Array.from([1, 2, -1]), later, 10),
            records.nearest(Float32Array.from([1, 2, -1]), later, 10)
          )
          const window = { start: Date.UTC(2024, 0, 3), end: Date.UTC(2024, 1, 10) }
          assert.deepStrictEqual(restoredRecords.inWindow(window, scope, 10), records.inWindow(window, scope, 10))
          assert.deepStrictEqual(restoredRecords.entityObservations(["Bob"], 5), records.entityObservations(["Bob"], 5))
          assert.deepStrictEqual(restoredRecords.chunk("c-1"), records.chunk("c-1"))
          for (const word of lexicon) {
            for (const tags of [undefined, (t: ReadonlyArray<string>) => t.includes("a")]) {
              const options = { types, depth: 50, tags }
              assert.deepStrictEqual(
                restored.search([{ lexeme: word, boost: 1 }], options),
                keywords.search([{ lexeme: word, boost: 1 }], options)
              )
            }
          }
          assert.deepStrictEqual(read.graph!.ids, graph.ids)
          assert.deepStrictEqual([...read.graph!.targets], [...graph.targets])
          assert.deepStrictEqual([...read.graph!.weights], [...graph.weights])
          assert.deepStrictEqual([...read.activity!], [1, 2, 3])
          assert.deepStrictEqual(read.dataVersion, { memories: keywords.size, seqMark: 9, changeMark: 2 })
        }
      ),
      { numRuns: 60 }
    )
  })

  it("writes and reads a large file in steps: a few MiB of vectors, a thousand records at a time", () => {
    const count = 12_000
    const dimensions = 128
    const records = new MemoryRecords(dimensions)
    records.upsert(
      Array.from(
        { length: count },
        (_, i) => plainMemory(i, Float32Array.from({ length: dimensions }, (_, d) => Math.sin(i + d)))
      )
    )
    const ids = Array.from({ length: count }, (_, i) => `m-${i}`)
    const graph = GraphSnapshot.build({
      nodeIds: ids,
      links: ids.slice(1).map((id, i) => ({ fromId: ids[i]!, toId: id, linkType: "temporal", weight: 1 }))
    })
    const keywords = KeywordIndex.build(ids.map((id, i) => ({
      id,
      seq: i + 1,
      factType: "world",
      tags: [],
      lexemes: ["memory", "lake"]
    })))
    const vectorBytes = count * dimensions * 4
    const written = stepsOf(writingBrainFile({ ...content(graph, keywords), records: recordsToParts(records) }))
    // 6 MB of vectors: at least a step per 2 MiB on the way out (it was one step for every typed section).
    assert.isAtLeast(written.pauses, count / 1_000 + Math.floor(vectorBytes / (2 * 1024 * 1024)))
    const read = stepsOf(readingBrainFile(open(written.value, 1e9)))
    // And on the way in: a step per thousand records' columns and per 2 MiB of vectors (five steps before).
    assert.isAtLeast(read.pauses, count / 1_000 + Math.floor(vectorBytes / (2 * 1024 * 1024)))
    assert.deepStrictEqual(read.value, readBrainFile(open(written.value, 1e9)))
    const back = recordsFromParts(read.value.records!)
    assert.strictEqual(back.size, count)
    assert.deepStrictEqual(back.vectorOf("m-11999"), records.vectorOf("m-11999"))
    assert.deepStrictEqual(back.get("m-5000"), records.get("m-5000"))
  })

  it("opens the version-1 fixture", () => {
    const fixture = new Uint8Array(readFileSync(join(import.meta.dirname, "../../fixtures/brain/v1-tiny.brain")))
    const opened = open(fixture, 1e6)
    assert.strictEqual(opened.version, 1)
    const read = readBrainFile(opened)
    assert.deepStrictEqual(read.graph!.ids, ["m-1", "m-2", "m-3"])
    assert.strictEqual(read.keywords, null)
    assert.strictEqual(read.dataVersion, null)
    assert.strictEqual(read.mentalModels[0]!.name, "Team")
    assert.strictEqual(summarize(opened).bankId, "legacy")
  })

  it("refuses a file whose checksums hold but whose graph points outside itself", () => {
    const graph = GraphSnapshot.build({
      nodeIds: ["x", "y"],
      links: [{ fromId: "x", toId: "y", linkType: "semantic", weight: 1 }]
    })
    const keywords = KeywordIndex.build([{ id: "x", seq: 1, factType: "world", tags: [], lexemes: ["tea"] }])
    const base = content(graph, keywords)
    const file = writeBrainFile({ ...base, graph: { ...base.graph, targets: Int32Array.from([7, 0]) } })
    const error = (() => {
      try {
        readBrainFile(open(file, 1e6))
      } catch (caught) {
        return caught
      }
    })()
    assert.instanceOf(error, BrainFileInvalid)
    assert.match((error as BrainFileInvalid).reason, /points outside the graph/)
  })
})

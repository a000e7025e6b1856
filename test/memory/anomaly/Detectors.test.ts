/**
 * The write-time detectors' math on crafted statements: negation and shared subject words, contradiction and
 * temporal-inconsistency gates and severities, entity inconsistency, causal flaws, and the correction that
 * supersedes the statement said earlier.
 */
import { assert, describe, it } from "@effect/vitest"
import { detectFlaws, findCycles, unsupportedOpinion } from "../../../src/memory/anomaly/CausalFlaws.ts"
import { contradictionSeverity, judgePair } from "../../../src/memory/anomaly/Contradiction.ts"
import { loweredConfidence, planCorrection } from "../../../src/memory/anomaly/Corrections.ts"
import type { Statement } from "../../../src/memory/anomaly/Detected.ts"
import { judgeEntityPair } from "../../../src/memory/anomaly/EntityInconsistency.ts"
import { contentWords, isNegated, overlap, tokens } from "../../../src/memory/anomaly/Polarity.ts"

let seq = 0
const statement = (id: string, text: string, options: Partial<Statement> = {}): Statement => ({
  id,
  text,
  factType: "world",
  occurredStart: null,
  said: new Date("2024-01-01T00:00:00Z"),
  seq: ++seq,
  confidence: null,
  contentHash: `hash-${id}`,
  supersededBy: null,
  ...options
})

const works = statement("old", "Alice works at Acme.", { said: new Date("2024-01-10T00:00:00Z") })
const left = statement("new", "Alice no longer works at Acme.", { said: new Date("2024-06-01T00:00:00Z") })

describe("Polarity", () => {
  it("folds contractions, finds negations and ignores stopwords, speaker labels and date notes", () => {
    assert.deepStrictEqual(tokens("I can't go, she won't."), ["cant", "go", "she", "wont"])
    assert.isTrue(isNegated(tokens("Bob didn't come")))
    assert.isTrue(isNegated(tokens("Alice no longer works at Acme")))
    assert.isFalse(isNegated(tokens("Alice works at Acme")))
    assert.deepStrictEqual([...contentWords("Caroline: I went to the gym [yesterday: 2024-05-01]")].sort(), [
      "gym",
      "went"
    ])
    const shared = overlap(contentWords(works.text), contentWords(left.text))
    assert.deepStrictEqual(shared.shared, ["acme", "alice", "works"])
    assert.strictEqual(shared.ratio, 1)
  })
})

describe("Contradiction", () => {
  it("reports opposite statements about the same subject, with the severity its formula gives", () => {
    const [found, ...rest] = judgePair(left, works, 0.9)
    assert.strictEqual(rest.length, 0)
    assert.strictEqual(found!.type, "contradiction")
    assert.deepStrictEqual(found!.unitIds, ["new", "old"])
    // similarity · confidence · (0.6 + 0.4 · shared ratio) = 0.9 · 1 · 1
    assert.strictEqual(found!.severity, 0.9)
    assert.strictEqual(found!.pairKey, "hash-new|hash-old")
    assert.closeTo(contradictionSeverity(0.8, 0.5, 0.5), 0.8 * 0.5 * 0.8, 1e-9)
  })

  it("stays quiet for the same polarity, a rewording, unrelated subjects or too little shared", () => {
    assert.deepStrictEqual(judgePair(statement("a", "Alice works at Acme in Berlin."), works, 0.9), [])
    assert.deepStrictEqual(judgePair(left, works, 0.97), [])
    assert.deepStrictEqual(judgePair(left, works, 0.5), [])
    assert.deepStrictEqual(judgePair(statement("b", "Bob never eats at Acme."), works, 0.8), [])
  })

  it("reports the same event placed at two times 1-30 days apart, whatever the polarity", () => {
    const first = statement("l1", "The product launch happened in Lisbon.", {
      occurredStart: new Date("2024-05-03T00:00:00Z")
    })
    const second = statement("l2", "The product launch happened in Lisbon.", {
      occurredStart: new Date("2024-05-10T00:00:00Z")
    })
    const [found] = judgePair(second, first, 0.9)
    assert.strictEqual(found!.type, "temporal_inconsistency")
    assert.closeTo(found!.severity, 0.72, 1e-9)
    assert.strictEqual(found!.metadata["delta_days"], 7)
    const months = statement("l3", "The product launch happened in Lisbon.", {
      occurredStart: new Date("2024-09-10T00:00:00Z")
    })
    assert.deepStrictEqual(judgePair(months, first, 0.9), [])
  })
})

describe("EntityInconsistency", () => {
  it("needs opposite polarity and a shared word besides the entity's own name", () => {
    const found = judgeEntityPair(left, works, 0.6, { entityIds: ["e-alice"], names: ["Alice"] })
    assert.strictEqual(found!.type, "entity_inconsistency")
    assert.closeTo(found!.severity, 0.42, 1e-9)
    assert.deepStrictEqual(found!.entityIds, ["e-alice"])
    const unrelated = statement("u", "Alice never liked the rain.")
    assert.isNull(judgeEntityPair(unrelated, works, 0.6, { entityIds: ["e-alice"], names: ["Alice"] }))
    assert.isNull(judgeEntityPair(left, works, 0.4, { entityIds: ["e-alice"], names: ["Alice"] }))
  })
})

describe("CausalFlaws", () => {
  it("finds each cycle once, whatever the link direction convention", () => {
    const cycles = findCycles([
      { cause: "a", effect: "b" },
      { cause: "b", effect: "c" },
      { cause: "c", effect: "a" },
      { cause: "c", effect: "d" }
    ], ["a", "b"])
    assert.deepStrictEqual(cycles, [["a", "b", "c", "a"]])
  })

  it("reports a cause dated after its effect (a week late is the maximum) and a step too unlike to follow", () => {
    const units = new Map([
      ["cause", { occurredStart: new Date("2024-01-04T12:00:00Z"), contentHash: "hc" }],
      ["effect", { occurredStart: new Date("2024-01-01T00:00:00Z"), contentHash: "he" }]
    ])
    // "effect caused_by cause": the cause is the link's target.
    const found = detectFlaws({
      links: [{ fromId: "effect", toId: "cause", linkType: "caused_by", similarity: 0.2 }],
      neighbourhood: [],
      units,
      newIds: ["effect"]
    })
    const byType = new Map(found.map((anomaly) => [anomaly.type, anomaly]))
    assert.closeTo(byType.get("flaw_temporal_violation")!.severity, 0.5, 1e-9)
    assert.deepStrictEqual(byType.get("flaw_temporal_violation")!.unitIds, ["cause", "effect"])
    assert.strictEqual(byType.get("flaw_missing_step")!.severity, 0.5)
    assert.isFalse(byType.has("flaw_circular"))
  })

  it("reports an opinion with no fact within cosine distance 0.4", () => {
    assert.strictEqual(unsupportedOpinion({ id: "o", contentHash: "h" }, 0.55)!.severity, 0.4)
    assert.strictEqual(unsupportedOpinion({ id: "o", contentHash: "h" }, null)!.type, "flaw_unsupported_opinion")
    assert.isNull(unsupportedOpinion({ id: "o", contentHash: "h" }, 0.2))
  })
})

describe("Corrections", () => {
  it("lowers confidence as the reference does: severity 0.8 takes 1.0 to 0.703", () => {
    assert.strictEqual(loweredConfidence(1, 0.8), 0.7032)
  })

  it("supersedes the statement said earlier, whichever side is new, and resolves the event", () => {
    const [found] = judgePair(left, works, 0.9)
    const statements = new Map([[works.id, works], [left.id, left]])
    const running = new Map<string, { value: number; supersededBy: string | null }>()
    const plan = planCorrection(found!, statements, running)
    assert.strictEqual(plan.status, "resolved")
    assert.deepStrictEqual(plan.correction!.supersede, {
      unitId: "old",
      confidence: loweredConfidence(1, 0.9),
      by: "new"
    })
    assert.deepStrictEqual(plan.correction!.beforeState, { confidence_score: 1, superseded_by: null })
    assert.closeTo(plan.correction!.confidenceDelta!, loweredConfidence(1, 0.9) - 1, 1e-4)
    // A backfilled statement said before the stored one is the one superseded.
    const backfilled = statement("early", "Alice no longer works at Acme.", { said: new Date("2023-01-01T00:00:00Z") })
    const [reverse] = judgePair(backfilled, works, 0.9)
    const reversePlan = planCorrection(reverse!, new Map([[works.id, works], [backfilled.id, backfilled]]), new Map())
    assert.strictEqual(reversePlan.correction!.supersede!.unitId, "early")
  })

  it("leaves a contradiction below 0.7 open and suggests a repair for causal-order flaws", () => {
    const [weak] = judgePair(left, works, 0.6)
    assert.strictEqual(planCorrection(weak!, new Map([[works.id, works], [left.id, left]]), new Map()).status, "open")
    const [step] = detectFlaws({
      links: [{ fromId: "a", toId: "b", linkType: "causes", similarity: 0.1 }],
      neighbourhood: [],
      units: new Map(),
      newIds: ["a"]
    })
    const repair = planCorrection(step!, new Map(), new Map())
    assert.strictEqual(repair.status, "acknowledged")
    assert.strictEqual(repair.correction!.correctionType, "chain_repair_suggestion")
    assert.isNull(repair.correction!.supersede)
  })
})

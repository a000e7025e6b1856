/**
 * The run-time checker of the Hindsight client's generated types: it reads every declaration the client ships, and
 * it fails on wrong values with the JSON path of each mismatch (a checker that passes everything would make the
 * contract test pass everything).
 */
import { assert, describe, it } from "@effect/vitest"
import { checker, declarations, sdkOperations, successTypes } from "./HindsightClientTypes.ts"
import { TypeChecker } from "./TypeChecker.ts"
import { parseDeclarations, parseType } from "./TypeDeclarations.ts"

const messages = (type: string, value: unknown) => checker.check(type, value).map((m) => `${m.path}: ${m.message}`)

describe("the client's type checker", () => {
  it("reads every declaration and every SDK function of the published client", () => {
    assert.strictEqual(declarations.size, 575)
    assert.strictEqual(sdkOperations.length, 89)
    for (const operation of sdkOperations) {
      assert.isAbove(successTypes(operation).size, 0, `${operation.name} declares a 2xx answer`)
    }
    const recall = sdkOperations.find((op) => op.name === "recallMemories")!
    assert.deepStrictEqual([recall.method, recall.path, recall.typeBase], [
      "POST",
      "/v1/default/banks/{bank_id}/memories/recall",
      "RecallMemories"
    ])
  })

  it("accepts a conforming value, with extra fields the type does not name", () => {
    const entry = {
      id: "a1",
      action: "retain",
      transport: "http",
      bank_id: null,
      started_at: "2026-01-01T00:00:00Z",
      ended_at: null,
      request: { any: "thing" },
      response: null,
      metadata: {},
      extra_field: 1
    }
    assert.deepStrictEqual(messages("AuditLogEntry", entry), [])
    assert.deepStrictEqual(
      messages("AuditLogListResponse", { bank_id: "b", total: 1, limit: 10, offset: 0, items: [entry] }),
      []
    )
  })

  it("fails a wrong value and names the path of each mismatch", () => {
    const entry = {
      id: 7,
      action: "retain",
      bank_id: null,
      started_at: null,
      ended_at: null,
      duration_ms: "5",
      request: [],
      response: null,
      metadata: null
    }
    assert.deepStrictEqual(
      messages("AuditLogListResponse", { bank_id: "b", total: 1, limit: null, offset: 0, items: [{}, entry] }),
      [
        "$.limit: null where number is required",
        "$.items[0].id: required field missing (string)",
        "$.items[0].action: required field missing (string)",
        "$.items[0].transport: required field missing (string)",
        "$.items[0].bank_id: required field missing (string | null)",
        "$.items[0].started_at: required field missing (string | null)",
        "$.items[0].ended_at: required field missing (string | null)",
        "$.items[0].request: required field missing (object | null)",
        "$.items[0].response: required field missing (object | null)",
        "$.items[0].metadata: required field missing (object)",
        "$.items[1].id: expected string, got number 7",
        "$.items[1].transport: required field missing (string)",
        "$.items[1].duration_ms: expected number | null, got string \"5\"",
        "$.items[1].request: expected object | null, got an array",
        "$.items[1].metadata: null where an object is required"
      ]
    )
  })

  it("fails a literal outside its union, a wrong index-signature value and a wrong array element", () => {
    const checker = new TypeChecker(parseDeclarations(`
      export type Mode = "full" | "delta";
      export type Thing = { mode: Mode; counts: { [key: string]: number }; tags?: Array<string> | null };
    `))
    assert.deepStrictEqual(checker.check("Thing", { mode: "half", counts: { a: 1, b: "2" }, tags: ["x", 3] }), [
      { path: "$.mode", message: "string \"half\" is not one of \"full\", \"delta\"" },
      { path: "$.counts.b", message: "expected number, got string \"2\"" },
      { path: "$.tags[1]", message: "expected string, got number 3" }
    ])
    assert.deepStrictEqual(checker.check("Thing", { mode: "full", counts: {}, tags: null }), [])
    assert.deepStrictEqual(checker.check("Thing", { mode: "full", counts: {}, tags: "x" }).map((m) => m.path), [
      "$.tags"
    ])
  })

  it("resolves the generator's `Responses[keyof Responses]` and parses its odd corners", () => {
    assert.deepStrictEqual(messages("RecallMemoriesResponse", { results: [] }), [])
    assert.deepStrictEqual(messages("RecallMemoriesResponse", { results: null }), [
      "$.results: null where an array is required"
    ])
    assert.isAbove(messages("RecallMemoriesResponse", {}).length, 0)
    assert.deepStrictEqual(checker.checkType(parseType("`${string}://${string}` | (string & {})"), "http://x", "$"), [])
    assert.throws(() => parseDeclarations("export type X = { a: string "), /expected|end/)
  })
})

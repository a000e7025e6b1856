/** JSON extraction and repair for models that answer with more (or other) than the JSON value asked for. */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { extractJson, stripReasoning } from "../../src/models/JsonRepair.ts"

const facts = {
  type: "object",
  properties: { facts: { type: "array", items: { type: "string" } } },
  required: ["facts"]
}

const parsed = (text: string, schema: Record<string, unknown> = facts) => {
  const result = extractJson(text, schema)
  assert.isTrue(Result.isSuccess(result), `expected JSON in ${JSON.stringify(text)}`)
  return Result.isSuccess(result) ? result.success : undefined
}

describe("JsonRepair", () => {
  it("finds the value among prose, code fences and reasoning blocks", () => {
    assert.deepStrictEqual(parsed("Sure! Here it is:\n{\"facts\": [\"a\"]}\nAnything else?"), { facts: ["a"] })
    assert.deepStrictEqual(parsed("```json\n{\"facts\": [\"b\"]}\n```"), { facts: ["b"] })
    assert.deepStrictEqual(parsed("<think>maybe {\"facts\": [\"draft\"]}?</think>\n{\"facts\": [\"c\"]}"), {
      facts: ["c"]
    })
    assert.deepStrictEqual(parsed("the prompt opened the block, so only the close shows </think> {\"facts\": []}"), {
      facts: []
    })
    assert.deepStrictEqual(parsed("[Note] the answer: {\"facts\": [\"d\"]}"), { facts: ["d"] })
  })

  it("repairs JavaScript- and Python-flavoured syntax", () => {
    assert.deepStrictEqual(parsed("{\"facts\": [\"a\", \"b\",],}"), { facts: ["a", "b"] })
    assert.deepStrictEqual(parsed("{'facts': ['it\\'s', \"q\"], // why\n}"), { facts: ["it's", "q"] })
    assert.deepStrictEqual(parsed("{facts: [\"x\"], sure: True, none: None}"), { facts: ["x"], sure: true, none: null })
    assert.deepStrictEqual(parsed("{\"facts\": [\"one\ntwo\"]}"), { facts: ["one\ntwo"] })
  })

  it("reshapes the top level towards the schema", () => {
    assert.deepStrictEqual(parsed("[\"a\", \"b\"]"), { facts: ["a", "b"] })
    assert.deepStrictEqual(parsed("{\"response\": {\"facts\": [\"w\"]}}"), { facts: ["w"] })
    assert.deepStrictEqual(parsed("{\"items\": [\"i\"]}"), { facts: ["i"] })
    const list = { type: "array", items: { type: "string" } }
    assert.deepStrictEqual(parsed("{\"results\": [\"r\"]}", list), ["r"])
  })

  it("follows $refs to find the array property", () => {
    const schema = {
      type: "object",
      properties: { people: { $ref: "#/$defs/People" } },
      required: ["people"],
      $defs: { People: { type: "array", items: { type: "string" } } }
    }
    assert.deepStrictEqual(parsed("[\"Ann\"]", schema), { people: ["Ann"] })
  })

  it("reports answers without JSON", () => {
    assert.deepStrictEqual(
      extractJson("I cannot help with that.", facts),
      Result.fail("the answer contained no JSON value")
    )
    assert.deepStrictEqual(extractJson("<think>only thinking", facts), Result.fail("the answer was empty"))
  })

  it("strips only leading reasoning from plain answers", () => {
    assert.strictEqual(stripReasoning("<think>\nhmm\n</think>\n\nParis."), "Paris.")
    assert.strictEqual(stripReasoning("Use an <analysis> tag here."), "Use an <analysis> tag here.")
    assert.strictEqual(stripReasoning("<|begin_of_thought|>x<|end_of_thought|>Yes."), "Yes.")
  })
})

/** response_schema: imported once (unsupported keywords rejected naming the field), answers extracted and validated. */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { responseValidator } from "../../src/reflect/StructuredOutput.ts"

const schema = {
  type: "object",
  properties: {
    name: { type: "string" },
    score: { type: "integer", minimum: 0, maximum: 10 },
    tags: { type: "array", items: { type: "string" } }
  },
  required: ["name", "score"]
}

describe("structured output", () => {
  it("accepts a matching answer, even fenced or surrounded by prose", () => {
    const validator = Result.getOrThrow(responseValidator(schema))
    assert.deepStrictEqual(Result.getOrThrow(validator.validate("{\"name\": \"Ada\", \"score\": 7}")), {
      name: "Ada",
      score: 7
    })
    const fenced = validator.validate("Here it is:\n```json\n{\"name\": \"Ada\", \"score\": 7, \"tags\": [\"x\"]}\n```")
    assert.deepStrictEqual(Result.getOrThrow(fenced), { name: "Ada", score: 7, tags: ["x"] })
  })

  it("rejects answers that break the schema, saying where", () => {
    const validator = Result.getOrThrow(responseValidator(schema))
    const outOfRange = validator.validate("{\"name\": \"Ada\", \"score\": 11}")
    assert.isTrue(Result.isFailure(outOfRange))
    if (Result.isFailure(outOfRange)) assert.include(outOfRange.failure, "score")
    const missing = validator.validate("{\"name\": \"Ada\"}")
    assert.isTrue(Result.isFailure(missing))
    assert.isTrue(Result.isFailure(validator.validate("no JSON here")))
  })

  it("a schema it cannot enforce is a validation error on response_schema", () => {
    const result = responseValidator({ type: "array", contains: { type: "string" } })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(result.failure.errors[0]!.field, "response_schema")
      assert.include(result.failure.detail, "contains")
    }
  })
})

/** Which observation scopes a fact feeds, from its tags and `observation_scopes`. */
import { assert, describe, it } from "@effect/vitest"
import { scopesOf } from "../../../src/memory/consolidation/ObservationScopes.ts"

describe("observation scopes", () => {
  it("combined (the default) is every tag together; an untagged fact feeds the untagged scope", () => {
    assert.deepStrictEqual(scopesOf(["team", "alice", "team"], null), [["alice", "team"]])
    assert.deepStrictEqual(scopesOf(["b", "a"], "combined"), [["a", "b"]])
    assert.deepStrictEqual(scopesOf([], null), [[]])
    assert.deepStrictEqual(scopesOf(["a"], []), [["a"]], "an empty custom list means combined")
  })

  it("per_tag is one scope per tag; all_combinations every non-empty subset", () => {
    assert.deepStrictEqual(scopesOf(["b", "a"], "per_tag"), [["a"], ["b"]])
    assert.deepStrictEqual(scopesOf([], "per_tag"), [[]])
    assert.sameDeepMembers(scopesOf(["c", "a", "b"], "all_combinations"), [
      ["a"],
      ["b"],
      ["c"],
      ["a", "b"],
      ["a", "c"],
      ["b", "c"],
      ["a", "b", "c"]
    ])
    const many = scopesOf(["1", "2", "3", "4", "5", "6", "7"], "all_combinations")
    assert.strictEqual(many.length, 8, "past six tags: each tag and the full set, not 127 scopes")
  })

  it("a custom list is used as given, normalised and without repeats; [[]] is one shared untagged scope", () => {
    assert.deepStrictEqual(scopesOf(["x"], [["team", "alice"], ["alice", "team"], ["bob"]]), [["alice", "team"], [
      "bob"
    ]])
    assert.deepStrictEqual(scopesOf(["x", "y"], [[]]), [[]])
  })
})

/** Migrations are forward only: ids unique, contiguous from 1, and named NNNN_name. */
import { assert, describe, it } from "@effect/vitest"
import { migrations } from "../../src/storage/migrations/index.ts"

describe("migrations", () => {
  it("have unique contiguous numbered ids", () => {
    const ids = Object.keys(migrations).map((key) => {
      const match = key.match(/^(\d{4})_[a-z0-9_]+$/)
      assert.isNotNull(match, key)
      return Number(match![1])
    })
    assert.deepStrictEqual(ids, ids.map((_, index) => index + 1))
  })
})

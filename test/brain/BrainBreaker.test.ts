/**
 * A bank brain's circuit breaker on its own clock: it opens after the configured failures in a row, admits exactly
 * one trial once half-open (everyone else is answered from SQL meanwhile), and an interrupted trial frees the slot.
 */
import { assert, describe, it } from "@effect/vitest"
import { BrainBreaker } from "../../src/brain/BrainBreaker.ts"

const openBreaker = () => {
  const breaker = new BrainBreaker(2, 1_000)
  breaker.failed(0)
  breaker.failed(10)
  return breaker
}

describe("BrainBreaker", () => {
  it("opens after the configured failures in a row and admits nothing while open", () => {
    const breaker = new BrainBreaker(2, 1_000)
    assert.isTrue(breaker.admit(0))
    breaker.failed(0)
    assert.strictEqual(breaker.state(5), "closed")
    assert.isTrue(breaker.admit(5))
    breaker.failed(10)
    assert.strictEqual(breaker.state(11), "open")
    assert.isFalse(breaker.admit(500))
  })

  it("admits one trial when half-open; concurrent readers are refused until it reports", () => {
    const breaker = openBreaker()
    assert.strictEqual(breaker.state(1_010), "half_open")
    assert.isTrue(breaker.admit(1_010))
    assert.isFalse(breaker.admit(1_011))
    assert.isFalse(breaker.admit(1_500))
    breaker.succeeded()
    assert.strictEqual(breaker.state(1_501), "closed")
    assert.isTrue(breaker.admit(1_501))
    assert.isTrue(breaker.admit(1_502))
  })

  it("a failed trial opens it again for a whole cool-down", () => {
    const breaker = openBreaker()
    assert.isTrue(breaker.admit(1_010))
    breaker.failed(1_020)
    assert.strictEqual(breaker.state(1_500), "open")
    assert.isFalse(breaker.admit(1_500))
    assert.isTrue(breaker.admit(2_020))
  })

  it("an interrupted trial frees the slot for the next reader", () => {
    const breaker = openBreaker()
    assert.isTrue(breaker.admit(1_010))
    breaker.abandoned()
    assert.strictEqual(breaker.state(1_011), "half_open")
    assert.isTrue(breaker.admit(1_011))
  })
})

/** The DNS-rebinding policy: defaults by bind address, configured lists, wildcards, ports and IPv6 host names. */
import { assert, describe, it } from "@effect/vitest"
import { makeRebindingPolicy, rebindingViolation } from "../../src/mcp/RebindingGuard.ts"

const allows = (policy: ReturnType<typeof makeRebindingPolicy>, host: string | undefined, origin?: string) =>
  rebindingViolation(policy, { host, origin }) === undefined

describe("RebindingGuard", () => {
  it("a loopback bind answers only loopback host names, with any port", () => {
    for (const bindHost of ["127.0.0.1", "localhost", "::1"]) {
      const policy = makeRebindingPolicy({ bindHost, allowedHosts: undefined, allowedOrigins: undefined })
      assert.isTrue(allows(policy, "127.0.0.1:8888"))
      assert.isTrue(allows(policy, "LOCALHOST"))
      assert.isTrue(allows(policy, "[::1]:8888"))
      assert.isFalse(allows(policy, "rebind.attacker.example:8888"))
      assert.isFalse(allows(policy, "127.0.0.1.attacker.example"))
      assert.isFalse(allows(policy, undefined), "a request without Host is refused")
    }
  })

  it("browser origins must be on an allowed host; requests without Origin are not from browsers", () => {
    const policy = makeRebindingPolicy({ bindHost: "127.0.0.1", allowedHosts: undefined, allowedOrigins: undefined })
    assert.isTrue(allows(policy, "localhost:8888"))
    assert.isTrue(allows(policy, "localhost:8888", "http://localhost:6274"))
    assert.isTrue(allows(policy, "localhost:8888", "http://[::1]:3000"))
    assert.isFalse(allows(policy, "localhost:8888", "http://attacker.example"))
    assert.isFalse(allows(policy, "localhost:8888", "null"))
    assert.isFalse(allows(policy, "localhost:8888", "not a url"))
  })

  it("any other bind checks nothing unless lists are configured", () => {
    const open = makeRebindingPolicy({ bindHost: "0.0.0.0", allowedHosts: undefined, allowedOrigins: undefined })
    assert.isTrue(allows(open, "anything.example", "https://anywhere.example"))
    const listed = makeRebindingPolicy({
      bindHost: "0.0.0.0",
      allowedHosts: ["memory.internal:8888", "10.0.0.5"],
      allowedOrigins: ["https://app.example.com/"]
    })
    assert.isTrue(allows(listed, "memory.internal"))
    assert.isTrue(allows(listed, "10.0.0.5:8888", "https://app.example.com"))
    assert.isFalse(allows(listed, "localhost:8888"))
    assert.isFalse(allows(listed, "memory.internal", "https://memory.internal"))
  })

  it("`*` switches a check off", () => {
    const policy = makeRebindingPolicy({ bindHost: "127.0.0.1", allowedHosts: ["*"], allowedOrigins: ["*"] })
    assert.isTrue(allows(policy, "proxy.example", "https://anywhere.example"))
    const hostsOnly = makeRebindingPolicy({ bindHost: "127.0.0.1", allowedHosts: undefined, allowedOrigins: ["*"] })
    assert.isFalse(allows(hostsOnly, "proxy.example"))
    assert.isTrue(allows(hostsOnly, "localhost", "https://anywhere.example"))
  })
})

/** The private-destination guard: which addresses a webhook may not reach when private destinations are denied. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { isPrivateAddress } from "../../src/net/GuardedLookup.ts"
import { checkDestination, guardedLookup } from "../../src/webhooks/DestinationGuard.ts"

describe("DestinationGuard", () => {
  it("refuses private, loopback, link-local, CGNAT, multicast and reserved IPv4", () => {
    for (const address of [
      "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254",
      "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1"
    ]) assert.isTrue(isPrivateAddress(address), address)
    for (const address of ["8.8.8.8", "93.184.216.34", "172.32.0.1", "192.169.0.1", "100.128.0.1"]) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })

  it("refuses the same ranges written as IPv6, including IPv4 carried inside IPv6", () => {
    for (const address of [
      "::1", "::", "fe80::1", "fd12:3456::1", "fc00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1",
      "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1", "2002:c0a8:0101::1", "fe80::1%eth0"
    ]) assert.isTrue(isPrivateAddress(address), address)
    for (const address of ["2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })

  it("anything that is not an address is refused", () => {
    assert.isTrue(isPrivateAddress("not-an-address"))
  })

  it.effect("checks literal hosts without DNS and resolved names after resolution", () =>
    Effect.gen(function*() {
      assert.include(yield* Effect.flip(checkDestination("http://127.0.0.1:8080/x")), "127.0.0.1")
      assert.include(yield* Effect.flip(checkDestination("http://[::1]/x")), "::1")
      assert.include(yield* Effect.flip(checkDestination("http://localhost/x")), "localhost resolves to")
      yield* checkDestination("https://93.184.216.34/x")
    }))

  it.effect("the connect-time lookup refuses a host name that resolves to a private address", () =>
    Effect.gen(function*() {
      const error = yield* Effect.promise(() =>
        new Promise<NodeJS.ErrnoException>((resolve) => {
          const sent = request({ host: "localhost", port: 9, path: "/", lookup: guardedLookup }, () => resolve(new Error("answered")))
          sent.on("error", resolve)
          sent.end()
        })
      )
      assert.strictEqual(error.code, "EDESTINATIONDENIED")
      assert.include(error.message, "SERVICE_API_WEBHOOK_DENY_PRIVATE")
    }))
})

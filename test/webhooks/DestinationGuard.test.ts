/**
 * The destination guard: link-local and metadata addresses are never reached; private ones not when private
 * destinations are denied (the default when the service listens beyond loopback).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { isLinkLocalOrMetadata, isPrivateAddress } from "../../src/net/GuardedLookup.ts"
import { checkDestination, destinationLookup } from "../../src/webhooks/DestinationGuard.ts"
import { EngramConfig, isLoopbackHost } from "../../src/config/EngramConfig.ts"
import { ConfigProvider, Layer } from "effect"

const deny = { denyPrivate: true }
const allow = { denyPrivate: false }

describe("DestinationGuard", () => {
  it("refuses private, loopback, link-local, CGNAT, multicast and reserved IPv4", () => {
    for (
      const address of [
        "127.0.0.1",
        "127.255.0.9",
        "10.0.0.1",
        "172.16.5.4",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "198.18.0.1"
      ]
    ) assert.isTrue(isPrivateAddress(address), address)
    for (const address of ["8.8.8.8", "93.184.216.34", "172.32.0.1", "192.169.0.1", "100.128.0.1"]) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })

  it("refuses the same ranges written as IPv6, including IPv4 carried inside IPv6", () => {
    for (
      const address of [
        "::1",
        "::",
        "fe80::1",
        "fd12:3456::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::127.0.0.1",
        "2002:c0a8:0101::1",
        "fe80::1%eth0"
      ]
    ) assert.isTrue(isPrivateAddress(address), address)
    for (const address of ["2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })

  it("anything that is not an address is refused", () => {
    assert.isTrue(isPrivateAddress("not-an-address"))
  })

  it.effect("checks literal hosts without DNS and resolved names after resolution", () =>
    Effect.gen(function*() {
      assert.include(yield* Effect.flip(checkDestination("http://127.0.0.1:8080/x", deny)), "127.0.0.1")
      assert.include(yield* Effect.flip(checkDestination("http://[::1]/x", deny)), "::1")
      assert.include(yield* Effect.flip(checkDestination("http://localhost/x", deny)), "localhost resolves to")
      yield* checkDestination("https://93.184.216.34/x", deny)
      // With private destinations allowed (local development), loopback is fine but metadata never is.
      yield* checkDestination("http://127.0.0.1:8080/x", allow)
      assert.include(
        yield* Effect.flip(checkDestination("http://169.254.169.254/latest/meta-data/", allow)),
        "metadata"
      )
      assert.include(yield* Effect.flip(checkDestination("http://[fd00:ec2::254]/", allow)), "metadata")
    }))

  it.effect("the connect-time lookup refuses a host name that resolves to a private address", () =>
    Effect.gen(function*() {
      const error = yield* Effect.promise(() =>
        new Promise<NodeJS.ErrnoException>((resolve) => {
          const sent = request({ host: "localhost", port: 9, path: "/", lookup: destinationLookup(deny) }, () =>
            resolve(new Error("answered")))
          sent.on("error", resolve)
          sent.end()
        })
      )
      assert.strictEqual(error.code, "EDESTINATIONDENIED")
      assert.include(error.message, "SERVICE_API_WEBHOOK_DENY_PRIVATE")
    }))

  it("link-local and metadata addresses are refused whatever the settings", () => {
    for (
      const address of [
        "169.254.169.254",
        "169.254.0.1",
        "fe80::1",
        "fd00:ec2::254",
        "100.100.100.200",
        "::ffff:169.254.169.254"
      ]
    ) {
      assert.isTrue(isLinkLocalOrMetadata(address), address)
    }
    for (const address of ["127.0.0.1", "10.0.0.1", "8.8.8.8", "::1"]) {
      assert.isFalse(isLinkLocalOrMetadata(address), address)
    }
  })

  it.effect("private destinations are denied by default when the service listens beyond loopback", () =>
    Effect.gen(function*() {
      const denyFor = (env: Record<string, string>) =>
        Effect.gen(function*() {
          return (yield* EngramConfig).webhookDenyPrivate
        }).pipe(
          Effect.provide(
            EngramConfig.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
          )
        )
      assert.isFalse(yield* denyFor({}))
      const open = { SERVICE_API_HOST: "0.0.0.0", SERVICE_API_ALLOW_UNAUTHENTICATED: "true" }
      assert.isTrue(yield* denyFor(open))
      assert.isFalse(yield* denyFor({ ...open, SERVICE_API_WEBHOOK_DENY_PRIVATE: "false" }))
      assert.isTrue(yield* denyFor({ SERVICE_API_WEBHOOK_DENY_PRIVATE: "true" }))
      assert.isTrue(isLoopbackHost("::1") && isLoopbackHost("localhost") && !isLoopbackHost("192.168.1.5"))
    }))
})

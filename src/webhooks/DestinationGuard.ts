/**
 * SSRF protection for webhook destinations (active with SERVICE_API_WEBHOOK_DENY_PRIVATE=true): the addresses
 * src/net/GuardedLookup.ts calls private (loopback, link-local, CGNAT, multicast, reserved) are refused. Checked
 * on the addresses a host name resolves to (at registration and before each delivery) and again on the address
 * the socket actually connects to, so a host whose DNS answer changes between the check and the connection
 * (DNS rebinding) is still refused.
 */
import { Effect } from "effect"
import * as Dns from "node:dns"
import { isIP } from "node:net"
import { guardedLookup as guardedLookupWith, isPrivateAddress } from "../net/GuardedLookup.ts"

const refusal = (host: string, address: string) =>
  `${host} resolves to ${address}, a private, loopback or link-local address, and ` +
  "SERVICE_API_WEBHOOK_DENY_PRIVATE is set"

/** The host part of a URL as a resolver or `isIP` expects it (IPv6 literals lose their brackets). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** Resolves the URL's host and fails with a readable reason when any of its addresses is refused. */
export const checkDestination = (url: string): Effect.Effect<void, string> =>
  Effect.gen(function*() {
    const host = hostOf(new URL(url))
    if (isIP(host) !== 0) {
      if (isPrivateAddress(host)) return yield* Effect.fail(refusal(host, host))
      return
    }
    const addresses = yield* Effect.callback<ReadonlyArray<Dns.LookupAddress>, string>((resume) => {
      Dns.lookup(host, { all: true }, (error, found) =>
        resume(error ? Effect.fail(`${host} could not be resolved (${error.code ?? error.message})`) : Effect.succeed(found)))
    })
    const refused = addresses.find((entry) => isPrivateAddress(entry.address))
    if (refused !== undefined) return yield* Effect.fail(refusal(host, refused.address))
  })

/** The lookup for the delivery worker's agents: the same check on the address each connection is about to use. */
export const guardedLookup = guardedLookupWith(refusal)

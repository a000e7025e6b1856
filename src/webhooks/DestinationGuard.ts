/**
 * SSRF protection for webhook destinations. Link-local and cloud metadata addresses (169.254.169.254, fe80::/10,
 * fd00:ec2::254) are always refused; with private destinations denied — `SERVICE_API_WEBHOOK_DENY_PRIVATE=true`, or by
 * default whenever the service listens on a non-loopback address — every address src/net/GuardedLookup.ts calls
 * private (loopback, private networks, CGNAT, multicast, reserved) is refused too. Checked on the addresses a host
 * name resolves to (at registration and before each delivery) and again on the address the socket actually connects
 * to, so a host whose DNS answer changes between the check and the connection (DNS rebinding) is still refused.
 */
import { Effect } from "effect"
import * as Dns from "node:dns"
import { isIP } from "node:net"
import { guardedLookup, isLinkLocalOrMetadata, isPrivateAddress } from "../net/GuardedLookup.ts"

export interface DestinationPolicy {
  /** Refuse private and loopback networks too, not only link-local and metadata addresses. */
  readonly denyPrivate: boolean
}

const deniedBy = (policy: DestinationPolicy) => (address: string) =>
  isLinkLocalOrMetadata(address) || (policy.denyPrivate && isPrivateAddress(address))

const refusal = (_policy: DestinationPolicy) => (host: string, address: string) =>
  isLinkLocalOrMetadata(address)
    ? `${host} resolves to ${address}, a link-local or cloud metadata address, which webhooks never reach whatever ` +
      "SERVICE_API_WEBHOOK_DENY_PRIVATE says"
    : `${host} resolves to ${address}, a private or loopback address, and private destinations are denied ` +
      "(SERVICE_API_WEBHOOK_DENY_PRIVATE, on by default when the service listens beyond loopback)"

/**
 * Names cloud providers give their metadata services. They resolve (inside the cloud) to a link-local address the
 * connect-time lookup refuses anyway; refusing the name too tells the caller at registration, wherever it runs.
 */
const metadataHostNames: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.com"
])

/** The host part of a URL as a resolver or `isIP` expects it (IPv6 literals lose their brackets). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** Resolves the URL's host and fails with a readable reason when any of its addresses is refused. */
export const checkDestination = (url: string, policy: DestinationPolicy): Effect.Effect<void, string> =>
  Effect.gen(function*() {
    const denied = deniedBy(policy)
    const host = hostOf(new URL(url))
    if (metadataHostNames.has(host.toLowerCase().replace(/\.$/, ""))) {
      return yield* Effect.fail(
        `${host} is a cloud metadata service, which webhooks never reach whatever SERVICE_API_WEBHOOK_DENY_PRIVATE says`
      )
    }
    if (isIP(host) !== 0) {
      if (denied(host)) return yield* Effect.fail(refusal(policy)(host, host))
      return
    }
    // With private destinations allowed a name is not resolved here (a receiver may not resolve yet, or only from
    // the network it lives on): the connect-time lookup still refuses link-local and metadata addresses.
    if (!policy.denyPrivate) return
    const addresses = yield* Effect.callback<ReadonlyArray<Dns.LookupAddress>, string>((resume) => {
      Dns.lookup(
        host,
        { all: true },
        (error, found) =>
          resume(
            error
              ? Effect.fail(`${host} could not be resolved (${error.code ?? error.message})`)
              : Effect.succeed(found)
          )
      )
    })
    const refused = addresses.find((entry) => denied(entry.address))
    if (refused !== undefined) return yield* Effect.fail(refusal(policy)(host, refused.address))
  })

/** The lookup for the delivery worker's agents: the same check on the address each connection is about to use. */
export const destinationLookup = (policy: DestinationPolicy) => guardedLookup(refusal(policy), deniedBy(policy))

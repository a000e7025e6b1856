/**
 * Decides whether research may fetch a URL: http(s) only, and unless private networks are allowed, only hosts
 * whose every resolved address is public. Search results are untrusted input; without this check a result could
 * point the service at its own loopback, the cloud metadata address or the internal network. Each redirect hop
 * is checked again by the fetcher, and the fetch itself connects through `researchLookup`, so a name that
 * resolves to a public address here and to a private one on the fetch (DNS rebinding) is refused too.
 */
import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { guardedLookup, isPrivateAddress } from "../net/GuardedLookup.ts"

export const isPublicAddress = (address: string): boolean => !isPrivateAddress(address)

/** The connect-time check for the page client's agents. */
export const researchLookup = guardedLookup((host, address) => `${host} resolves to ${address}, not a public address`)

/** Why the URL may not be fetched, or undefined when it may. */
export const refusal = (url: URL, allowPrivateNetworks: boolean): Effect.Effect<string | undefined> => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return Effect.succeed(`only http and https pages are read`)
  if (url.username !== "" || url.password !== "") return Effect.succeed("URLs with credentials are not fetched")
  if (allowPrivateNetworks) return Effect.succeed(undefined)
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0) return Effect.succeed(isPublicAddress(host) ? undefined : `${host} is not a public address`)
  return Effect.tryPromise(() => lookup(host, { all: true, verbatim: true })).pipe(
    Effect.map((addresses) =>
      addresses.length === 0
        ? `${host} does not resolve`
        : addresses.every((entry) => isPublicAddress(entry.address))
        ? undefined
        : `${host} resolves to a non-public address`
    ),
    Effect.orElseSucceed(() => `${host} does not resolve`)
  )
}

/**
 * Decides whether research may fetch a URL: http(s) only, and unless private networks are allowed, only hosts
 * whose every resolved address is public. Search results are untrusted input; without this check a result could
 * point the service at its own loopback, the cloud metadata address or the internal network. Each redirect hop
 * is checked again by the fetcher. (The check resolves the name once; a resolver that answers differently on the
 * fetch itself is not covered.)
 */
import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"

const nonPublic = (() => {
  const list = new BlockList()
  for (const [network, prefix] of [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16],
    ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
    ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
  ] as const) list.addSubnet(network, prefix, "ipv4")
  for (const [network, prefix] of [
    ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32]
  ] as const) list.addSubnet(network, prefix, "ipv6")
  return list
})()

export const isPublicAddress = (address: string): boolean => {
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i)
  if (mapped) return isPublicAddress(mapped[1]!)
  const family = isIP(address)
  if (family === 0) return false
  return !nonPublic.check(address, family === 4 ? "ipv4" : "ipv6")
}

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

/**
 * Which addresses the service must not reach for untrusted input (webhook destinations, pages found by research):
 * private, loopback, link-local, carrier-grade NAT, documentation, multicast and reserved ones. Also a `lookup` for
 * HTTP agents that applies the check to the addresses a connection is about to use, so a name that resolves
 * differently at connect time than when it was checked (DNS rebinding) is still refused. Callers decide when the
 * guard applies and word its refusal.
 */
import * as Dns from "node:dns"
import type { LookupFunction } from "node:net"
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (
  const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) blocked.addSubnet(network, prefix, "ipv4")
// `::/96` covers the unspecified address, loopback and the deprecated IPv4-compatible form.
for (
  const [network, prefix] of [
    ["::", 96],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8],
    ["2001:db8::", 32]
  ] as const
) blocked.addSubnet(network, prefix, "ipv6")

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted IPv4 accepted). */
const ipv6Groups = (address: string): ReadonlyArray<number> => {
  let text = address.split("%")[0]!
  const dotted = text.match(/^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number]
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = "", tail] = text.split("::")
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`

/** IPv4 addresses carried inside IPv6 ones (NAT64 64:ff9b::/96, 6to4 2002::/16) are judged as IPv4. */
const embeddedIpv4 = (address: string): string | undefined => {
  const groups = ipv6Groups(address)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return ipv4Of(groups[6]!, groups[7]!)
  }
  if (groups[0] === 0x2002) return ipv4Of(groups[1]!, groups[2]!)
  return undefined
}

/** True for any address untrusted input must not reach (anything that is not an IP address included). */
export const isPrivateAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, "ipv4")
  if (family !== 6) return true
  // BlockList also matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 rules.
  if (blocked.check(address, "ipv6")) return true
  const inner = embeddedIpv4(address)
  return inner !== undefined && blocked.check(inner, "ipv4")
}

const linkLocal = new BlockList()
linkLocal.addSubnet("169.254.0.0", 16, "ipv4")
linkLocal.addSubnet("fe80::", 10, "ipv6")
/** Cloud instance-metadata endpoints outside link-local space: AWS's IPv6 one, Alibaba's. */
const metadataAddresses = new Set(["fd00:ec2::254", "100.100.100.200"])

/**
 * Link-local and cloud metadata addresses (169.254.169.254 and its kin): refused as a destination whatever the
 * settings say — nothing a webhook should reach lives there, and a metadata service hands out credentials.
 */
export const isLinkLocalOrMetadata = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return true
  if (metadataAddresses.has(address.split("%")[0]!.toLowerCase())) return true
  if (family === 4) return linkLocal.check(address, "ipv4")
  if (linkLocal.check(address, "ipv6")) return true
  const inner = embeddedIpv4(address)
  return inner !== undefined && (linkLocal.check(inner, "ipv4") || metadataAddresses.has(inner))
}

/** The error code of a connection the guarded lookup refused. */
export const destinationDenied = "EDESTINATIONDENIED"

/**
 * A `lookup` for HTTP agents that refuses private addresses at connect time, failing with `refusal(host, address)`
 * and code `EDESTINATIONDENIED`. Node calls it with `all: true` when it races address families, and expects the
 * matching callback shape back.
 */
export const guardedLookup = (
  refusal: (host: string, address: string) => string,
  denied: (address: string) => boolean = isPrivateAddress
): LookupFunction =>
(hostname, options, callback) => {
  Dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0)
    const refused = addresses.find((entry) => denied(entry.address))
    if (refused !== undefined) {
      const denied: NodeJS.ErrnoException = new Error(refusal(hostname, refused.address))
      denied.code = destinationDenied
      return callback(denied, "", 0)
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]
    if (first === undefined) return callback(new Error(`${hostname} has no address`), "", 0)
    callback(null, first.address, first.family)
  })
}

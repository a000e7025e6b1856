/**
 * DNS-rebinding protection for the MCP endpoint. A web page whose host name an attacker re-points at 127.0.0.1
 * can otherwise drive a loopback server from the victim's browser: its requests carry the attacker's host name in
 * `Host` and its own origin in `Origin`. So when the service listens on loopback, only loopback host names are
 * answered and browser origins must be on an allowed host; both lists are configurable. It decides only; the
 * HTTP layer answers 403.
 */

export interface RebindingPolicy {
  /** Lower-case host names (no port; IPv6 in brackets); `undefined` accepts any Host. */
  readonly hosts: ReadonlySet<string> | undefined
  /** Normalised origins (`scheme://host[:port]`); `"hosts"`: any origin on an allowed host; `undefined`: any. */
  readonly origins: ReadonlySet<string> | "hosts" | undefined
}

const loopbackBinds = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])
export const loopbackHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

/** The host name of a Host header value or a bare entry ("example.com:8888" → "example.com"). */
const hostnameOf = (host: string): string | undefined => {
  try {
    return new URL(`http://${host.trim()}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

const originOf = (origin: string): string | undefined => {
  try {
    const url = new URL(origin.trim())
    return url.origin === "null" ? undefined : url.origin.toLowerCase()
  } catch {
    return undefined
  }
}

const isWildcard = (list: ReadonlyArray<string>) => list.includes("*")

/**
 * The policy for a server bound to `bindHost`. Without configured hosts, a loopback bind accepts only loopback
 * host names and any other bind accepts every host (a deployment behind a proxy or on a LAN must list its own
 * names to be checked). `*` in a list switches that check off.
 */
export const makeRebindingPolicy = (options: {
  readonly bindHost: string
  readonly allowedHosts: ReadonlyArray<string> | undefined
  readonly allowedOrigins: ReadonlyArray<string> | undefined
}): RebindingPolicy => {
  const configuredHosts = options.allowedHosts
  const hostList = configuredHosts ?? (loopbackBinds.has(options.bindHost.toLowerCase()) ? loopbackHosts : undefined)
  const hosts = hostList === undefined || isWildcard(hostList)
    ? undefined
    : new Set(hostList.flatMap((host) => hostnameOf(host) ?? []))
  const originList = options.allowedOrigins
  const origins = originList === undefined
    ? (hosts === undefined ? undefined : "hosts" as const)
    : isWildcard(originList)
    ? undefined
    : new Set(originList.flatMap((origin) => originOf(origin) ?? []))
  return { hosts, origins }
}

/** Why the request must be refused, or `undefined` when it may proceed. Requests without `Origin` are not browsers'. */
export const rebindingViolation = (
  policy: RebindingPolicy,
  headers: { readonly host: string | undefined; readonly origin: string | undefined }
): string | undefined => {
  if (policy.hosts !== undefined) {
    const hostname = headers.host === undefined ? undefined : hostnameOf(headers.host)
    if (hostname === undefined || !policy.hosts.has(hostname)) {
      return `Host '${headers.host ?? ""}' is not allowed for the MCP endpoint (set SERVICE_API_MCP_ALLOWED_HOSTS)`
    }
  }
  if (headers.origin === undefined || policy.origins === undefined) return undefined
  const origin = originOf(headers.origin)
  const allowed = origin !== undefined && (policy.origins === "hosts"
    ? policy.hosts?.has(new URL(origin).hostname) === true
    : policy.origins.has(origin))
  return allowed
    ? undefined
    : `Origin '${headers.origin}' is not allowed for the MCP endpoint (set SERVICE_API_MCP_ALLOWED_ORIGINS)`
}

/**
 * The API keys a request may present and the banks each reaches: SERVICE_API_TENANT_API_KEY reaches every bank, each
 * key of SERVICE_API_TENANT_API_KEYS its own list. Keys are compared as SHA-256 digests in constant time, and every
 * key is compared on every request, so neither a key nor which key matched can be read from response timings.
 */
import { Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { EngramSettings } from "../config/EngramConfig.ts"
import { type BankAccess, banksMatching } from "./BankAccess.ts"

interface KeyEntry {
  readonly digest: Buffer
  readonly access: BankAccess
}

/** A key the ring accepted: the banks it reaches, and its fingerprint (`key:` and 12 hex digits of its SHA-256). */
export interface KnownKey {
  readonly access: BankAccess
  readonly fingerprint: string
}

export interface KeyRing {
  /** The banks the `Authorization: Bearer <key>` header reaches, or undefined when it names no known key. */
  readonly accessOf: (authorization: string | undefined) => BankAccess | undefined
  /** The same, with the key's fingerprint (what the audit log names; never the key). */
  readonly identify: (authorization: string | undefined) => KnownKey | undefined
}

const digest = (value: string) => createHash("sha256").update(value).digest()

const bearer = (authorization: string | undefined) => authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim()

export const makeKeyRing = (
  keys: ReadonlyArray<{ readonly key: Redacted.Redacted<string>; readonly banks: ReadonlyArray<string> }>
): KeyRing => {
  const entries: ReadonlyArray<KeyEntry> = keys.map(({ banks, key }) => ({
    digest: digest(Redacted.value(key)),
    access: banksMatching(banks)
  }))
  const identify = (authorization: string | undefined): KnownKey | undefined => {
    const presented = bearer(authorization)
    if (presented === undefined || presented === "") return undefined
    const presentedDigest = digest(presented)
    let found: BankAccess | undefined
    for (const entry of entries) {
      // No early exit: the time taken does not depend on which key matched.
      if (timingSafeEqual(presentedDigest, entry.digest) && found === undefined) found = entry.access
    }
    // Only a key the ring accepted gets a fingerprint, so an unknown key's hash is never stored anywhere.
    return found === undefined
      ? undefined
      : { access: found, fingerprint: `key:${presentedDigest.toString("hex").slice(0, 12)}` }
  }
  return { identify, accessOf: (authorization) => identify(authorization)?.access }
}

/** The service's key ring, or undefined when authentication is off (every request reaches every bank). */
export const keyRingOf = (settings: EngramSettings): KeyRing | undefined => {
  if (settings.tenantExtension !== "api_key") return undefined
  const single = Option.match(settings.tenantApiKey, {
    onNone: () => [],
    onSome: (key) => [{ key, banks: ["*"] }]
  })
  return makeKeyRing([...single, ...settings.tenantApiKeys])
}

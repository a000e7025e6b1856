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

export interface KeyRing {
  /** The banks the `Authorization: Bearer <key>` header reaches, or undefined when it names no known key. */
  readonly accessOf: (authorization: string | undefined) => BankAccess | undefined
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
  return {
    accessOf: (authorization) => {
      const presented = bearer(authorization)
      if (presented === undefined || presented === "") return undefined
      const presentedDigest = digest(presented)
      let found: BankAccess | undefined
      for (const entry of entries) {
        // No early exit: the time taken does not depend on which key matched.
        if (timingSafeEqual(presentedDigest, entry.digest) && found === undefined) found = entry.access
      }
      return found
    }
  }
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


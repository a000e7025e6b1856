/**
 * Who made a request, as the audit log names them: `key:` and the first 12 hex digits of the API key's SHA-256 (enough
 * to tell keys apart and to match a key one holds, useless for recovering it), or `anonymous` when the server needs no
 * key. Never the key itself.
 */
import { createHash } from "node:crypto"
import type { KeyRing } from "../auth/KeyRing.ts"

export const anonymous = "anonymous"

const bearer = (authorization: string | undefined) => authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim()

/** The key's fingerprint; only for a key the ring accepted, so an unknown key's hash is never stored. */
export const keyFingerprint = (key: string) => `key:${createHash("sha256").update(key).digest("hex").slice(0, 12)}`

/**
 * The actor of a request carrying `authorization`, or undefined when the server needs a key and this is not one of
 * its keys (such a request is refused before it can change anything, so there is nothing to attribute).
 */
export const actorOf = (keyRing: KeyRing | undefined, authorization: string | undefined): string | undefined => {
  if (keyRing === undefined) return anonymous
  if (keyRing.accessOf(authorization) === undefined) return undefined
  const key = bearer(authorization)
  return key === undefined ? undefined : keyFingerprint(key)
}

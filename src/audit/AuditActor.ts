/**
 * Who made a request, as the audit log names them: `key:` and the first 12 hex digits of the API key's SHA-256 (enough
 * to tell keys apart and to match a key one holds, useless for recovering it; computed by the key ring that checked
 * it), or `anonymous` when the server needs no key. Never the key itself.
 */
import type { KeyRing } from "../auth/KeyRing.ts"

export const anonymous = "anonymous"

/**
 * The actor of a request carrying `authorization`, or undefined when the server needs a key and this is not one of
 * its keys (such a request is refused before it can change anything, so there is nothing to attribute).
 */
export const actorOf = (keyRing: KeyRing | undefined, authorization: string | undefined): string | undefined =>
  keyRing === undefined ? anonymous : keyRing.identify(authorization)?.fingerprint

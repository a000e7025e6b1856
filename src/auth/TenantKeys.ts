/**
 * SERVICE_API_TENANT_API_KEYS: several API keys, each reaching a list of banks. The value is a JSON object from key
 * to bank patterns, e.g. `{"k-alice-…": ["alice", "alice-*"], "k-ops-…": "*"}`; a pattern is an exact bank id,
 * `prefix*`, or `*` for every bank. A problem is reported by position and reason, never by echoing the value: it
 * holds secrets.
 */
import { Redacted } from "effect"

export interface TenantKey {
  readonly key: Redacted.Redacted<string>
  readonly banks: ReadonlyArray<string>
}

const variable = "SERVICE_API_TENANT_API_KEYS"

/** The keys, or the reason the value is unusable. */
export const parseTenantKeys = (value: Redacted.Redacted<string>): ReadonlyArray<TenantKey> | string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Redacted.value(value))
  } catch {
    return `${variable} must be a JSON object mapping each API key to a list of bank ids or patterns ("team-*", "*")`
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return `${variable} must be a JSON object mapping each API key to a list of bank ids or patterns`
  }
  const keys: Array<TenantKey> = []
  for (const [index, [key, banks]] of Object.entries(parsed).entries()) {
    const position = `${variable}: entry ${index + 1}`
    if (key.trim().length < 8) return `${position} has a key shorter than 8 characters`
    const patterns = banks === "*" ? ["*"] : banks
    if (!Array.isArray(patterns) || patterns.length === 0) {
      return `${position} must map its key to "*" or a non-empty list of bank ids`
    }
    if (!patterns.every((pattern) => typeof pattern === "string" && pattern.trim() !== "")) {
      return `${position} lists a bank that is not a non-empty string`
    }
    keys.push({ key: Redacted.make(key.trim()), banks: patterns.map((pattern: string) => pattern.trim()) })
  }
  if (keys.length === 0) return `${variable} holds no keys`
  return keys
}

/**
 * Memory defense: retained content screened for secrets before anything is stored, under the bank's
 * `memory_defense` policy (Hindsight's open-source `sensitive_data` rule). `redact` replaces each match with
 * `[REDACTED:type]`, `block` drops the items that contain one, `allow` stores them as they are. The patterns are
 * fixed expressions with bounded repetition (no user-supplied pattern is ever compiled). Pure.
 */
import type { MemoryItem } from "../../domain/Memory.ts"
import type { DefenseAction, MemoryDefensePolicy } from "../../domain/PipelineSettings.ts"

interface Detector {
  readonly type: string
  readonly pattern: RegExp
  /** Whether a match really is one (a card number passes the Luhn check). */
  readonly accept?: (match: string) => boolean
}

const luhn = (match: string) => {
  const digits = match.replace(/\D/g, "")
  if (digits.length < 13 || digits.length > 19) return false
  let sum = 0
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index])
    if (index % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

/** Most specific first: a key that two patterns match is named by the first. */
export const detectors: ReadonlyArray<Detector> = [
  {
    type: "private_key",
    pattern: /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[\s\S]{0,8192}?-----END [A-Z ]{0,40}PRIVATE KEY-----)?/g
  },
  { type: "aws_access_key", pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g },
  { type: "github_token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { type: "anthropic_api_key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { type: "openai_api_key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { type: "stripe_key", pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { type: "slack_token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { type: "slack_webhook", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,}/g },
  { type: "google_api_key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { type: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  {
    type: "connection_string",
    pattern:
      /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql):\/\/[^\s:@/]{1,256}:[^\s@/]{1,256}@[^\s"'<>]+/g
  },
  {
    type: "credential_assignment",
    pattern:
      /\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\s{0,3}[:=]\s{0,3}["']?[^\s"']{6,}/gi
  },
  { type: "credit_card", pattern: /\b\d(?:[ -]?\d){12,18}\b/g, accept: luhn },
  { type: "us_ssn", pattern: /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g }
]

export interface Screened {
  readonly text: string
  /** The kinds of secret found, once each. */
  readonly found: ReadonlyArray<string>
}

/** Replaces every secret in the text with `[REDACTED:type]`. */
export const redactSecrets = (text: string): Screened => {
  const found = new Set<string>()
  let current = text
  for (const detector of detectors) {
    current = current.replace(detector.pattern, (match) => {
      if (detector.accept !== undefined && !detector.accept(match)) return match
      found.add(detector.type)
      return `[REDACTED:${detector.type}]`
    })
  }
  return { text: current, found: [...found] }
}

/** What the policy asks for, or undefined when it screens nothing (no policy, disabled, or only `allow`). */
export const defenseAction = (policy: MemoryDefensePolicy | null): Exclude<DefenseAction, "allow"> | undefined => {
  if (policy === null || policy.enabled === false) return undefined
  const rules = policy.rules ?? []
  // A policy switched on without rules runs the one detector there is, redacting; several rules: the strictest.
  if (rules.length === 0) return "redact"
  if (rules.some((rule) => rule.action === "block")) return "block"
  if (rules.some((rule) => rule.action === "redact")) return "redact"
  return undefined
}

export interface DefenseOutcome {
  readonly items: ReadonlyArray<MemoryItem>
  readonly redacted: number
  readonly blocked: number
  readonly found: ReadonlyArray<string>
}

/** Screens each item's content and context; the items to store, and what was done to the others. */
export const screenItems = (policy: MemoryDefensePolicy | null, items: ReadonlyArray<MemoryItem>): DefenseOutcome => {
  const action = defenseAction(policy)
  if (action === undefined) return { items, redacted: 0, blocked: 0, found: [] }
  const kept: Array<MemoryItem> = []
  const found = new Set<string>()
  let redacted = 0
  let blocked = 0
  for (const item of items) {
    const content = redactSecrets(item.content)
    const context = item.context === undefined || item.context === null ? undefined : redactSecrets(item.context)
    const kinds = [...content.found, ...(context?.found ?? [])]
    kinds.forEach((kind) => found.add(kind))
    if (kinds.length === 0) {
      kept.push(item)
    } else if (action === "block") {
      blocked++
    } else {
      redacted++
      kept.push({ ...item, content: content.text, ...(context === undefined ? {} : { context: context.text }) })
    }
  }
  return { items: kept, redacted, blocked, found: [...found] }
}

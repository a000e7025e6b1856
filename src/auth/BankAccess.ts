/**
 * Which banks a request may reach. An API key from SERVICE_API_TENANT_API_KEYS names its banks (exact ids, `prefix*`
 * patterns, or `*`); the single SERVICE_API_TENANT_API_KEY, no key at all, and in-process use of the library reach
 * every bank. The HTTP edge (`http/AuthFirst`) sets `CurrentBankAccess` for each request; handlers and MCP tools
 * that name a bank outside the path (a chunk by id, a repo, a clone's source, the bank list) ask it.
 */
import { Context, Effect } from "effect"
import { Forbidden } from "../domain/Errors.ts"

export interface BankAccess {
  /** True for keys that reach every bank: only they may use the admin routes and /metrics. */
  readonly everyBank: boolean
  readonly reaches: (bankId: string) => boolean
}

export const everyBank: BankAccess = { everyBank: true, reaches: () => true }

/** Access to the banks matching any of `patterns`: an exact id, `prefix*` (ids starting with prefix), or `*`. */
export const banksMatching = (patterns: ReadonlyArray<string>): BankAccess => {
  if (patterns.includes("*")) return everyBank
  const exact = new Set(patterns.filter((pattern) => !pattern.endsWith("*")))
  const prefixes = patterns.filter((pattern) => pattern.endsWith("*")).map((pattern) => pattern.slice(0, -1))
  return {
    everyBank: false,
    reaches: (bankId) => exact.has(bankId) || prefixes.some((prefix) => bankId.startsWith(prefix))
  }
}

export const CurrentBankAccess = Context.Reference<BankAccess>("engram/auth/CurrentBankAccess", {
  defaultValue: () => everyBank
})

/** Fails with 403 when the request's key does not reach `bankId`; `field` names where the id came from. */
export const requireBank = Effect.fnUntraced(function*(bankId: string, field = "bank_id") {
  const access = yield* CurrentBankAccess
  if (!access.reaches(bankId)) {
    return yield* new Forbidden({ detail: `${field}: this API key does not reach bank '${bankId}'` })
  }
})

/** Fails with 403 unless the request's key reaches every bank (admin routes). */
export const requireEveryBank = Effect.gen(function*() {
  const access = yield* CurrentBankAccess
  if (!access.everyBank) return yield* new Forbidden({ detail: "this route needs an API key that reaches every bank" })
})

/** Keeps the items whose bank the request's key reaches. */
export const reachable = Effect.fnUntraced(function*<A>(items: ReadonlyArray<A>, bankOf: (item: A) => string) {
  const access = yield* CurrentBankAccess
  return access.everyBank ? items : items.filter((item) => access.reaches(bankOf(item)))
})

/** Whether the request's key reaches `bankId`: for records found by id, answered as missing when it does not. */
export const reachesBank = (bankId: string) =>
  Effect.gen(function*() {
    return (yield* CurrentBankAccess).reaches(bankId)
  })

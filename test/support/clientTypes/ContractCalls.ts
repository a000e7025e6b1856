/**
 * Calls the published Hindsight client's SDK functions and keeps the contract's score: each answer's status must
 * be a 2xx the client declares and its body must pass the client's own type for that status; every call and every
 * mismatch is recorded so the test can report all of them at once and see which operations were never checked.
 */
import { Effect } from "effect"
import { checker, type SdkOperation, sdkOperations, successTypes } from "./HindsightClientTypes.ts"

export interface SdkAnswer {
  readonly data?: unknown
  readonly error?: unknown
  readonly response: Response
}

type SdkFunction = (options: object) => Promise<SdkAnswer>

export class ContractCalls {
  /** Operations whose valid call answered as the client declares. */
  readonly checked = new Set<string>()
  /** The options of each operation's first valid call, from which its bad inputs are derived. */
  readonly validOptions = new Map<string, object>()
  readonly failures: Array<string> = []
  private readonly sdk: Record<string, SdkFunction>
  private readonly client: unknown

  constructor(sdk: object, client: unknown) {
    this.sdk = sdk as Record<string, SdkFunction>
    this.client = client
  }

  operation(name: string): SdkOperation {
    const operation = sdkOperations.find((op) => op.name === name)
    if (operation === undefined) throw new Error(`the client has no SDK function ${name}`)
    return operation
  }

  /** The SDK function called through the client, as it is (no checks). */
  raw(name: string, options: object = {}): Effect.Effect<SdkAnswer> {
    const call = this.sdk[name]
    if (call === undefined) return Effect.die(new Error(`the client has no SDK function ${name}`))
    return Effect.promise(() => call({ client: this.client, ...options }))
  }

  /** A valid call: it must answer a declared 2xx whose body passes the client's type. Returns the body. */
  valid(name: string, options: object = {}): Effect.Effect<any> {
    if (!this.validOptions.has(name)) this.validOptions.set(name, options)
    return Effect.map(this.raw(name, options), (answer) => {
      const declared = successTypes(this.operation(name))
      const status = answer.response.status
      const type = declared.get(status)
      const failed = this.failures.length
      if (type === undefined) {
        const detail = answer.error === undefined ? "" : ` ${JSON.stringify(answer.error).slice(0, 300)}`
        this.failures.push(
          `${name}: answered ${status}, the client declares ${[...declared.keys()].join(", ")}${detail}`
        )
      } else {
        for (const mismatch of checker.checkType(type, answer.data, "$")) {
          this.failures.push(`${name}: ${mismatch.path}: ${mismatch.message}`)
        }
      }
      // Counted as checked once its answer was read against the type (a listed divergence is reported, not hidden).
      if (this.failures.length === failed || type !== undefined) this.checked.add(name)
      return answer.data as any
    })
  }

  /** Operations never called with valid input and not listed as legitimately answering otherwise. */
  uncalled(exempt: ReadonlySet<string>): Array<string> {
    return sdkOperations.map((op) => op.name).filter((name) => !this.validOptions.has(name) && !exempt.has(name))
  }
}

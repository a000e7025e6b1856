/**
 * Every SQL statement the in-process service runs, background work included (a group's writer, consolidation, the
 * outbox), in order: provide `layer` to the app layer, then count what ran since a point. `observe` sees each
 * statement with the fiber that runs it, for a test that asks more of a statement than its text.
 */
import { Effect, type Fiber, Layer } from "effect"
import { Statement } from "effect/sql"

export const makeStatementLog = (observe?: (text: string, fiber: Fiber.Fiber<unknown, unknown>) => void) => {
  /** Each statement's text, whitespace collapsed. */
  const ran: Array<string> = []
  const layer = Layer.succeed(Statement.CurrentTransformer, (statement, _sql, fiber) => {
    const text = statement.compile()[0].replace(/\s+/g, " ").trim()
    ran.push(text)
    observe?.(text, fiber)
    return Effect.succeed(statement)
  })
  /** How many statements matching `pattern` ran since `ran.length` was `since`. */
  const count = (since: number, pattern: RegExp) => ran.slice(since).filter((text) => pattern.test(text)).length
  return { ran, layer, count }
}

/**
 * The few request helpers most HTTP tests write for themselves: a bank's path, a call to the test server, a call
 * that must succeed, and waiting for a durable operation to finish.
 */
import { assert } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestServer } from "./TestServer.ts"
import { eventually } from "./Eventually.ts"

export const bankPath = (id: string) => `/v1/default/banks/${id}`

export const call = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

/** The call, asserted to answer 2xx (the failure message carries the answer). */
export const ok = (method: string, path: string, json?: unknown) =>
  Effect.tap(
    call(method, path, json),
    (response) =>
      Effect.sync(() =>
        assert.isTrue(response.status >= 200 && response.status < 300, `${method} ${path}: ${response.text}`)
      )
  )

/** The operation's detail once it completed or failed. */
export const operationFinished = (
  bankId: string,
  operationId: string,
  timeout: Duration.Duration = Duration.seconds(60)
) =>
  eventually(
    Effect.map(call("GET", `${bankPath(bankId)}/operations/${operationId}`), (r) => r.body),
    (detail) => detail.status === "completed" || detail.status === "failed",
    timeout
  )

/** A recall's results as `{ id, text }`, optionally on a repo branch: what "the same answer" means in repo tests. */
export const recallResults = (bankId: string, query: string, branch?: string) =>
  Effect.map(
    ok("POST", `${bankPath(bankId)}/memories/recall`, {
      query,
      ...(branch === undefined ? {} : { branch_name: branch })
    }),
    (response) => response.body.results.map((result: any) => ({ id: result.id, text: result.text }))
  )

/**
 * Waits until the bank has no pending or running operation (background work a retain queued writes rows too);
 * fails if it is still busy after `timeout`, rather than letting the test read a bank that has not settled.
 */
export const settled = (bankId: string, timeout: Duration.Input = Duration.seconds(60)) =>
  eventually(
    call("GET", `${bankPath(bankId)}/operations`),
    (listed) => !(listed.body?.operations ?? []).some((op: any) => op.status === "pending" || op.status === "running"),
    timeout,
    { what: `bank ${bankId} settled`, interval: "50 millis" }
  ).pipe(Effect.asVoid)

/**
 * A memory repo's commits keep no webhook credentials: neither the `url` (a token in its path or query) nor any of
 * `http_config` (bearer headers, API-key params) is stored, like the webhook `secret`, and changing only them leaves
 * the workspace clean. A hard reset in the same bank keeps the live values; a fork into another bank gets the
 * webhook with an empty URL and no HTTP settings, so it delivers nothing until its URL is set again.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Snapshots } from "../../src/repos/Snapshots.ts"
import { bankPath, ok } from "../support/HttpCalls.ts"
import { testApp } from "../support/TestServer.ts"

const token = "Bearer tok-repo-secret-91d2"
const custom = "plain-header-value-3e7f"
const param = "param-secret-0b55"
const url = "http://127.0.0.1:9/hook/url-token-5c1a"

const webhookOf = (bankId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ url: string }>`SELECT url FROM webhooks WHERE bank_id = ${bankId}`.pipe(Effect.orDie)
    assert.strictEqual(rows.length, 1)
    return rows[0]!
  })

const httpConfigOf = (bankId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<
      { config: string }
    >`SELECT http_config::text AS config FROM webhooks WHERE bank_id = ${bankId}`
      .pipe(Effect.orDie)
    assert.strictEqual(rows.length, 1)
    return JSON.parse(rows[0]!.config)
  })

layer(testApp(), { excludeTestServices: true, timeout: "2 minutes" })("repo commits and webhook credentials", (it) => {
  it.effect("commits store no webhook url or http_config; reset keeps the live ones, a fork gets none", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bankId = "repo-secrets"
      yield* ok("PUT", bankPath(bankId), {})
      const webhook = yield* ok("POST", `${bankPath(bankId)}/webhooks`, {
        url,
        event_types: ["consolidation.completed"],
        enabled: false,
        http_config: {
          timeout_seconds: 7,
          headers: { Authorization: token, "X-Custom": custom },
          params: { token: param }
        }
      })
      const enabled = yield* ok("POST", `${bankPath(bankId)}/repos/enable`, {})
      const repoId = enabled.body.repo_id
      yield* ok("PATCH", `${bankPath(bankId)}/webhooks/${webhook.body.id}`, { event_types: ["operation.failed"] })
      const committed = yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "webhook events changed" })
      assert.isTrue(committed.body.created, committed.text)

      const stored = yield* sql<{ body: string }>`SELECT body::text AS body FROM repo_objects`.pipe(Effect.orDie)
      const everything = stored.map((row) => row.body).join("\n")
      assert.include(everything, "operation.failed", "the webhook row is not in the commit at all")
      for (const secret of ["tok-repo-secret-91d2", custom, param, "url-token-5c1a", "timeout_seconds"]) {
        assert.notInclude(everything, secret, `a commit keeps the webhook credential ${secret}`)
      }

      // Changing only the URL or the HTTP settings changes nothing a commit holds.
      yield* ok("PATCH", `${bankPath(bankId)}/webhooks/${webhook.body.id}`, {
        url: `${url}-rotated`,
        http_config: {
          timeout_seconds: 9,
          headers: { Authorization: token, "X-Custom": custom },
          params: { token: param }
        }
      })
      const status = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
      assert.isFalse(status.body.dirty, status.text)

      // Back to the first commit in the same bank: the events return, the live credentials stay.
      const log = yield* ok("GET", `/v1/default/repos/${repoId}/log`)
      const initial = log.body.commits?.at(-1) ?? log.body.items?.at(-1)
      assert.isDefined(initial, log.text)
      yield* ok("POST", `/v1/default/repos/${repoId}/reset-hard`, { commit_id: initial.commit_id, force: true })
      const reset = yield* httpConfigOf(bankId)
      assert.deepStrictEqual(reset.headers, { Authorization: token, "X-Custom": custom })
      assert.deepStrictEqual(reset.params, { token: param })
      assert.strictEqual(reset.timeout_seconds, 9)
      assert.strictEqual((yield* webhookOf(bankId)).url, `${url}-rotated`)
      const afterReset = yield* ok("GET", `${bankPath(bankId)}/webhooks`)
      assert.include(afterReset.text, "consolidation.completed")

      // A whole-state restore into the same bank (the Snapshots primitive) keeps them as well.
      const snapshots = yield* Snapshots
      yield* Effect.gen(function*() {
        const captured = yield* snapshots.capture({ bankId, workspace: false }, {})
        const tables = Object.fromEntries(Object.entries(captured.tables).map(([name, state]) => [name, state.hash]))
        yield* snapshots.restore(bankId, tables, { rename: false, keepMap: false })
      }).pipe(sql.withTransaction, Effect.orDie)
      const restored = yield* httpConfigOf(bankId)
      assert.deepStrictEqual(restored.headers, { Authorization: token, "X-Custom": custom })
      assert.deepStrictEqual(restored.params, { token: param })
      assert.strictEqual((yield* webhookOf(bankId)).url, `${url}-rotated`)

      // A fork is another bank: the webhook comes without its URL and HTTP settings.
      yield* ok("POST", `/v1/default/repos/${repoId}/fork-bank`, {
        target_bank_id: "repo-secrets-fork",
        source_commit_id: initial.commit_id
      })
      const forked = yield* httpConfigOf("repo-secrets-fork")
      assert.deepStrictEqual(forked, {})
      assert.strictEqual((yield* webhookOf("repo-secrets-fork")).url, "")
    }))
})

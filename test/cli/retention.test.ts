/**
 * `engram retention` as a user runs it (a child process against the real server): it shows the policy, sets limits
 * (and the maximum age removes the memories past it at once), `--json` is the config's retention view, and a value
 * the server refuses exits 3 naming the field.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, ok, settled } from "../support/HttpCalls.ts"
import { type CliRun, parsedJson, runCli } from "../support/CliProcess.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const expectCode = (run: CliRun, code: number) =>
  assert.strictEqual(
    run.code,
    code,
    `exit ${run.code}, expected ${code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`
  )

layer(testApp(), { excludeTestServices: true, timeout: "3 minutes" })("engram retention", (it) => {
  it.effect("show, set, and a refused value", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const url = ["--url", server.url]
      const bank = "cli-retention"
      yield* ok("POST", `${bankPath(bank)}/memories`, {
        items: [{ content: "Ottilie sailed to Bergen in 2019." }, { content: "The harbour opens at six." }]
      })
      yield* settled(bank)
      yield* sql`UPDATE memory_units SET created_at = now() - interval '400 days' WHERE bank_id = ${bank} AND text LIKE '%Bergen%'`

      const shown = yield* runCli(["retention", bank, ...url])
      expectCode(shown, 0)
      assert.include(shown.stdout, "max memories")
      assert.include(shown.stdout, "off")

      const set = yield* runCli(["retention", bank, "--max-age", "world=365", "--half-life", "90", "--json", ...url])
      expectCode(set, 0)
      const view = parsedJson(set)
      assert.strictEqual(view.retention.max_age_days.world, 365)
      assert.strictEqual(view.retention.recency_half_life_days, 90)
      yield* settled(bank)
      const texts = (yield* ok("GET", `${bankPath(bank)}/memories/list`)).text
      assert.notInclude(texts, "Bergen", "the fact stored 400 days ago went")
      assert.include(texts, "harbour")

      const refused = yield* runCli(["retention", bank, "--max-age", "world=-3", ...url])
      expectCode(refused, 3)
      assert.include(refused.stderr + refused.stdout, "retention.max_age_days.world")
    }))
})

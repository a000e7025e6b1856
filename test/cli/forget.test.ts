/**
 * `engram forget` as a user runs it (a child process against the real server): a dry run reports and keeps the
 * memories (with `--purge-history`, listing the repo commit it would rewrite), the forget removes them, `--json` is the
 * API's report, and a request naming nothing exits 3 (refused).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath, ok } from "../support/HttpCalls.ts"
import { type CliRun, parsedJson, runCli } from "../support/CliProcess.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const expectCode = (run: CliRun, code: number) =>
  assert.strictEqual(
    run.code,
    code,
    `exit ${run.code}, expected ${code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`
  )

layer(testApp(), { excludeTestServices: true, timeout: "3 minutes" })("engram forget", (it) => {
  it.effect("dry run, forget, and a refused request", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const url = ["--url", server.url]
      yield* ok("POST", `${bankPath("cli-forget")}/memories`, {
        items: [{ content: "Ottilie sails to Bergen every summer." }, { content: "The harbour opens at six." }]
      })
      const count = Effect.map(ok("GET", `${bankPath("cli-forget")}/memories/list`), (r) => r.body.total as number)
      const before = yield* count

      const dry = yield* runCli(["forget", "cli-forget", "--entity", "Ottilie", "--dry-run", ...url])
      expectCode(dry, 0)
      assert.include(dry.stdout, "would forget")
      assert.strictEqual(yield* count, before)

      // With a repo, a dry run with --purge-history lists the commit it would rewrite, old id to new.
      const repo = (yield* ok("POST", `${bankPath("cli-forget")}/repos/enable`, {})).body
      const purgeDry = yield* runCli([
        "forget",
        "cli-forget",
        "--entity",
        "Ottilie",
        "--dry-run",
        "--purge-history",
        ...url
      ])
      expectCode(purgeDry, 0)
      assert.include(purgeDry.stdout, "repo commits that would be rewritten: 1")
      assert.include(purgeDry.stdout, repo.head_commit_id)
      assert.strictEqual(yield* count, before)

      const forgotten = yield* runCli(["forget", "cli-forget", "--entity", "Ottilie", "--json", ...url])
      expectCode(forgotten, 0)
      const report = parsedJson(forgotten)
      assert.isAtLeast(report.removed.memories, 1)
      assert.strictEqual(yield* count, before - report.removed.memories)
      assert.notInclude((yield* ok("GET", `${bankPath("cli-forget")}/memories/list`)).text, "Ottilie")

      const refused = yield* runCli(["forget", "cli-forget", ...url])
      expectCode(refused, 3)
      assert.include(refused.stderr + refused.stdout, "entity, memory_ids, document_id or tag")
    }))
})

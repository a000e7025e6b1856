/**
 * Every outbound read stops at a byte cap with a clear error, over the real server: a learn remote whose `/version`
 * or `.brain` export never ends, a search provider whose answer never ends, and a git host whose API answer or
 * archive never ends. Each fails well before its time limit, naming the cap, and the remote sees the connection
 * closed after little more than the cap (the rest was never pulled into memory).
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { defaultResearchSettings } from "../../src/research/ResearchSettings.ts"
import { bankPath, call, ok, operationFinished } from "../support/HttpCalls.ts"
import { type HostileRemote, hostileRemote } from "../support/HostileRemote.ts"
import { testApp } from "../support/TestServer.ts"

class Remote extends Context.Service<Remote, HostileRemote>()("test/security/outbound-caps/Remote") {}

/** The fixed caps of a learn remote's JSON answer and of a search provider's answer. */
const maxJsonAnswerBytes = 16 * 1024 * 1024
const maxAnswerBytes = 4 * 1024 * 1024
const maxFileBytes = 1024 * 1024
const maxArchiveBytes = 1024 * 1024
/** Far beyond what a capped read takes here; an uncapped one runs into it. */
const slowLimit = Duration.seconds(60)

const app = Layer.unwrap(Effect.gen(function*() {
  const remote = yield* Remote
  return testApp({
    operationMaxAttempts: 1,
    brain: { ...defaultBrainSettings, learnAllowPrivateNetworks: true, maxFileBytes },
    research: {
      ...defaultResearchSettings,
      provider: "searxng",
      baseUrl: Option.some(`${remote.origin}/searxng`),
      allowPrivateNetworks: true,
      searchTimeout: slowLimit
    },
    codebases: {
      ...defaultCodebaseSettings,
      githostApiUrl: remote.origin,
      githostAllowPrivateNetworks: true,
      githostTimeout: slowLimit,
      maxArchiveBytes
    }
  })
})).pipe(Layer.provideMerge(Layer.effect(Remote, hostileRemote)))

/** The remote's endless body on `path` was cut off: the client hung up after about `cap` bytes. */
const cutOff = (remote: HostileRemote, path: string, cap: number) =>
  Effect.gen(function*() {
    const body = remote.endless.find((entry) => entry.path === path)
    assert.isDefined(body, `no endless body was served on ${path}`)
    yield* Effect.promise(() => body!.closed)
    assert.isAtMost(body!.sent(), cap + 8 * 1024 * 1024, "the client kept reading far past the cap")
  })

const elapsedSince = (started: number) => (Date.now() - started) / 1000

layer(app, { excludeTestServices: true, timeout: "3 minutes" })("outbound reads stop at their byte cap", (it) => {
  it.effect("a learn remote whose JSON answer never ends fails at the cap, not at the 30 s timeout", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      remote.route("/version", { endless: { contentType: "application/json", prefix: "{\"features\":\"" } })
      yield* ok("PUT", bankPath("caps-learn"), {})
      const started = Date.now()
      const submitted = yield* ok("POST", `${bankPath("caps-learn")}/brain/learn`, {
        remote_endpoint: remote.origin,
        remote_bank_id: "endless"
      })
      const done = yield* operationFinished("caps-learn", submitted.body.operation_id, Duration.seconds(50))
      assert.strictEqual(done.status, "failed", JSON.stringify(done))
      assert.match(done.error_message, new RegExp(`GET /version: .*larger than ${maxJsonAnswerBytes} bytes`))
      assert.isBelow(elapsedSince(started), 25, "the learn waited for its timeout instead of stopping at the cap")
      yield* cutOff(remote, "/version", maxJsonAnswerBytes)
    }))

  it.effect("a learn remote whose .brain export never ends fails at SERVICE_API_BRAIN_MAX_FILE_BYTES", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      const exportPath = "/v1/default/banks/big/brain/export"
      remote.route("/version", { json: { api_version: "1", features: { brain_import_export: true } } })
      remote.route(exportPath, { endless: { contentType: "application/octet-stream" } })
      yield* ok("PUT", bankPath("caps-brain"), {})
      const started = Date.now()
      const submitted = yield* ok("POST", `${bankPath("caps-brain")}/brain/learn`, {
        remote_endpoint: remote.origin,
        remote_bank_id: "big",
        learning_type: "distilled"
      })
      const done = yield* operationFinished("caps-brain", submitted.body.operation_id, Duration.seconds(50))
      assert.strictEqual(done.status, "failed", JSON.stringify(done))
      assert.match(
        done.error_message,
        /larger than SERVICE_API_BRAIN_MAX_FILE_BYTES \(1048576 bytes\); reading stopped there/
      )
      assert.isBelow(elapsedSince(started), 25)
      yield* cutOff(remote, exportPath, maxFileBytes)
    }))

  it.effect("a search provider whose answer never ends is a 502 naming the cap, not a wait for the time limit", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      remote.route("/searxng/search", { endless: { contentType: "application/json", prefix: "{\"results\":[" } })
      yield* ok("PUT", bankPath("caps-research"), {})
      const started = Date.now()
      const answered = yield* call("POST", `${bankPath("caps-research")}/internet/research`, { query: "endless tea?" })
      assert.strictEqual(answered.status, 502, answered.text)
      assert.match(
        answered.body.detail,
        new RegExp(`answered more than ${maxAnswerBytes} bytes; reading stopped there`)
      )
      assert.isBelow(elapsedSince(started), 25)
      yield* cutOff(remote, "/searxng/search", maxAnswerBytes)
    }))

  it.effect("a git host whose API answer or archive never ends fails at the cap, naming it", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      const base = `${bankPath("caps-git")}/codebases/import/githost`
      yield* ok("PUT", bankPath("caps-git"), {})

      // The host misbehaves: 503, not a refusal of the caller's repository.
      remote.route("/repos/acme/chatty", {
        endless: { contentType: "application/json", prefix: "{\"default_branch\":\"" }
      })
      const chatty = yield* call("POST", base, { owner: "acme", repo: "chatty" })
      assert.strictEqual(chatty.status, 503, chatty.text)
      assert.match(
        chatty.body.detail,
        /the git host's API answer is larger than the 2 MiB cap \(2097152 bytes\); reading stopped there/
      )
      yield* cutOff(remote, "/repos/acme/chatty", 2 * 1024 * 1024)

      // The repository is too big for this service: 400 on `repo`, naming the setting.
      remote.route("/repos/acme/huge", { json: { default_branch: "main" } })
      remote.route("/repos/acme/huge/commits/main", { json: { sha: "feedface" } })
      remote.route("/repos/acme/huge/zipball/feedface", { endless: { contentType: "application/zip" } })
      const huge = yield* call("POST", base, { owner: "acme", repo: "huge" })
      assert.strictEqual(huge.status, 400, huge.text)
      assert.match(huge.text, /repo/)
      assert.match(huge.text, /SERVICE_API_CODEBASE_MAX_ARCHIVE_BYTES \(1048576 bytes\); reading stopped there/)
      yield* cutOff(remote, "/repos/acme/huge/zipball/feedface", maxArchiveBytes)
    }))
})

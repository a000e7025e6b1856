/**
 * A learn's remote key lives only as long as the learn: once it failed (or was cancelled) the key is gone from the
 * process, so retrying the failed operation cannot send it again. And a learn remote must be https unless private
 * networks are allowed and the remote is private: plain http to a public host is a 400 naming `remote_endpoint`,
 * whatever the setting.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { BrainLearn } from "../../src/learn/BrainLearn.ts"
import { bankPath, call, ok, operationFinished } from "../support/HttpCalls.ts"
import { type HostileRemote, hostileRemote } from "../support/HostileRemote.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

class Remote extends Context.Service<Remote, HostileRemote>()("test/security/learn-keys/Remote") {}

const app = testApp({
  operationMaxAttempts: 1,
  brain: { ...defaultBrainSettings, learnAllowPrivateNetworks: true }
}).pipe(Layer.provideMerge(Layer.effect(Remote, hostileRemote)))

/** A public address (documentation-free, never contacted: the request is refused before any connection). */
const publicHost = "93.184.216.34"

const withKey = (remote: HostileRemote, key: string) =>
  remote.requests.filter((request) => request.headers["authorization"] === `Bearer ${key}`).length

layer(app, { excludeTestServices: true, timeout: "2 minutes" })("a learn's remote key", (it) => {
  it.effect("is forgotten when the learn fails: a retry of the failed operation does not send it again", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      const learn = yield* BrainLearn
      const key = "remote-key-failed-learn-5c1e"
      remote.route("/version", { status: 404 })
      yield* ok("PUT", bankPath("keys-fail"), {})
      const submitted = yield* ok("POST", `${bankPath("keys-fail")}/brain/learn`, {
        remote_endpoint: remote.origin,
        remote_bank_id: "gone",
        remote_api_key: key
      })
      const id = submitted.body.operation_id
      const failed = yield* operationFinished("keys-fail", id)
      assert.strictEqual(failed.status, "failed", JSON.stringify(failed))
      assert.strictEqual(withKey(remote, key), 1)
      assert.isUndefined(learn.remoteKey(id), "the failed learn still holds its remote key")

      // The remote answers now; the retried learn has no key to send and says how to give it one.
      remote.route("/version", { json: { features: {} } })
      const retried = yield* ok("POST", `${bankPath("keys-fail")}/operations/${id}/retry`)
      assert.strictEqual(retried.status, 200, retried.text)
      const again = yield* operationFinished("keys-fail", id)
      assert.strictEqual(again.status, "failed", JSON.stringify(again))
      assert.match(again.error_message, /submit the learn again with the key/)
      assert.strictEqual(withKey(remote, key), 1, "the retry sent the remote key again")
      assert.notInclude(JSON.stringify(again), key)
    }))

  it.effect("is forgotten when a running learn is cancelled", () =>
    Effect.gen(function*() {
      const remote = yield* Remote
      const learn = yield* BrainLearn
      const key = "remote-key-cancelled-learn-77ab"
      remote.route("/version", { hang: true })
      yield* ok("PUT", bankPath("keys-cancel"), {})
      const submitted = yield* ok("POST", `${bankPath("keys-cancel")}/brain/learn`, {
        remote_endpoint: remote.origin,
        remote_bank_id: "slow",
        remote_api_key: key
      })
      const id = submitted.body.operation_id
      // The learn is running: its request reached the remote (with the key), which never answers.
      yield* eventually(Effect.sync(() => withKey(remote, key)), (count) => count === 1, Duration.seconds(15))
      assert.isDefined(learn.remoteKey(id))
      const cancelled = yield* call("DELETE", `${bankPath("keys-cancel")}/operations/${id}`)
      assert.strictEqual(cancelled.status, 200, cancelled.text)
      assert.isUndefined(learn.remoteKey(id), "the cancelled learn still holds its remote key")
    }))

  it.effect("travels over https only to a public remote: plain http is a 400 naming remote_endpoint", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      yield* ok("PUT", bankPath("keys-http"), {})
      const refusedHere = yield* server.request("POST", `${bankPath("keys-http")}/brain/learn`, {
        json: { remote_endpoint: `http://${publicHost}:8080`, remote_bank_id: "x", remote_api_key: "k" }
      })
      assert.strictEqual(refusedHere.status, 400, refusedHere.text)
      assert.deepStrictEqual(refusedHere.body.errors.map((error: any) => error.field), ["remote_endpoint"])
      assert.match(refusedHere.body.detail, /remote_endpoint: must use https/)

      // A service with the default settings (private networks refused) wants https for every remote.
      const strictContext = yield* Layer.buildWithMemoMap(testApp(), Layer.makeMemoMapUnsafe(), yield* Effect.scope)
      const strict = Context.get(strictContext, TestServer)
      yield* strict.request("PUT", bankPath("keys-http"), { json: {} })
      const refusedThere = yield* strict.request("POST", `${bankPath("keys-http")}/brain/learn`, {
        json: { remote_endpoint: `http://${publicHost}`, remote_bank_id: "x" }
      })
      assert.strictEqual(refusedThere.status, 400, refusedThere.text)
      assert.match(refusedThere.body.detail, /remote_endpoint: must use https/)
    })))
})

/**
 * Webhooks on the default loopback service: local receivers keep working (private destinations are allowed while the
 * service listens on loopback), but link-local and cloud metadata addresses are refused always, at registration.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

const hooks = (bank: string) => `/v1/default/banks/${bank}/webhooks`

layer(testApp(), { excludeTestServices: true })("webhook destinations by default", (it) => {
  it.effect("metadata and link-local addresses are refused with 400 naming url; a loopback receiver is accepted", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/wh-default", { json: {} })
      for (
        const url of [
          "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
          "http://[fe80::1]/hook",
          "http://[::ffff:169.254.169.254]/latest",
          "http://metadata.google.internal/computeMetadata/v1/"
        ]
      ) {
        const refused = yield* server.request("POST", hooks("wh-default"), { json: { url } })
        assert.strictEqual(refused.status, 400, url)
        assert.deepStrictEqual(refused.body.errors.map((issue: any) => issue.field), ["url"], url)
      }
      const listed = yield* server.request("GET", hooks("wh-default"))
      assert.strictEqual(listed.body.items.length, 0)
      const local = yield* server.request("POST", hooks("wh-default"), { json: { url: "http://127.0.0.1:9/hook" } })
      assert.strictEqual(local.status, 201)
    }))
})

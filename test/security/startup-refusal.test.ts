/**
 * Start-up refuses settings that would expose every bank: listening beyond loopback with no API key, or bank-scoped
 * keys (SERVICE_API_TENANT_API_KEYS) it cannot read — saying what is wrong without echoing a key.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { EngramConfig } from "../../src/config/EngramConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return yield* EngramConfig
  }).pipe(
    Effect.provide(EngramConfig.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))),
    Effect.exit
  )

describe("EngramConfig", () => {
  it.effect("a non-loopback address without a key is a start-up error naming what to set", () =>
    Effect.gen(function*() {
      const refused = yield* load({ SERVICE_API_HOST: "0.0.0.0" })
      assert.isTrue(refused._tag === "Failure")
      assert.include(JSON.stringify(refused), "SERVICE_API_TENANT_API_KEY")
      assert.include(JSON.stringify(refused), "SERVICE_API_ALLOW_UNAUTHENTICATED")
      for (
        const env of [
          {},
          { SERVICE_API_HOST: "::1" },
          {
            SERVICE_API_HOST: "0.0.0.0",
            SERVICE_API_TENANT_EXTENSION: "api_key",
            SERVICE_API_TENANT_API_KEY: "k-0123456789"
          },
          { SERVICE_API_HOST: "0.0.0.0", SERVICE_API_ALLOW_UNAUTHENTICATED: "true" }
        ]
      ) {
        assert.strictEqual((yield* load(env))._tag, "Success", JSON.stringify(env))
      }
    }))

  it.effect("SERVICE_API_TENANT_API_KEYS is enough for the api_key extension; a malformed value is refused, never echoed", () =>
    Effect.gen(function*() {
      const secret = "k-secret-in-the-value-0123"
      const ok = yield* load({
        SERVICE_API_TENANT_EXTENSION: "api_key",
        SERVICE_API_TENANT_API_KEYS: JSON.stringify({ [secret]: ["team-*"], "k-ops-0123456789": "*" })
      })
      assert.strictEqual(ok._tag, "Success")
      for (
        const value of [
          `{"${secret}": "team"}`,
          `{"${secret}": []}`,
          `{"${secret}": [""]}`,
          `["${secret}"]`,
          `{${secret}}`,
          `{"short": ["a"]}`
        ]
      ) {
        const refused = yield* load({ SERVICE_API_TENANT_EXTENSION: "api_key", SERVICE_API_TENANT_API_KEYS: value })
        assert.strictEqual(refused._tag, "Failure", value)
        const text = JSON.stringify(refused)
        assert.include(text, "SERVICE_API_TENANT_API_KEYS")
        assert.notInclude(text, secret)
      }
    }))
})

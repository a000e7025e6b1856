/** Start-up refuses settings that would expose every bank: listening beyond loopback with no API key. */
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
      for (const env of [
        {},
        { SERVICE_API_HOST: "::1" },
        { SERVICE_API_HOST: "0.0.0.0", SERVICE_API_TENANT_EXTENSION: "api_key", SERVICE_API_TENANT_API_KEY: "k-0123456789" },
        { SERVICE_API_HOST: "0.0.0.0", SERVICE_API_ALLOW_UNAUTHENTICATED: "true" }
      ]) {
        assert.strictEqual((yield* load(env))._tag, "Success", JSON.stringify(env))
      }
    }))
})

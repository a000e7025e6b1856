/**
 * Runs the real engram service in-process on a free loopback port, on the database tier this test run was
 * started for (PGlite in a fresh temporary data dir, or PostgreSQL in a fresh schema), and talks to it over
 * a real socket with fetch.
 */
import { Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { AppWith } from "../../layers/AppWith.ts"
import type { EngramSettings } from "../../src/config/EngramConfig.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import type { Embeddings } from "../../src/models/Embeddings.ts"
import type { Llm } from "../../src/models/Llm.ts"
import { OfflineTestModels } from "./FakeModels.ts"
import { freshDatabaseSettings } from "./TestDatabase.ts"
export { databaseTier, freshDatabaseSettings, freshServiceEnv } from "./TestDatabase.ts"

export interface Response {
  readonly status: number
  readonly body: any
  readonly text: string
  readonly headers: Headers
}

export class TestServer extends Context.Service<TestServer, {
  readonly url: string
  readonly request: (
    method: string,
    path: string,
    options?: { readonly json?: unknown; readonly body?: string; readonly headers?: Record<string, string> }
  ) => Effect.Effect<Response>
}>()("test/TestServer") {}

const serverHandle = Layer.effect(
  TestServer,
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag === "UnixPathAddress") return yield* Effect.die("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}`
    return TestServer.of({
      url,
      request: (method, path, options) =>
        Effect.promise(async () => {
          const headers: Record<string, string> = { ...options?.headers }
          let body = options?.body
          if (options?.json !== undefined) {
            body = JSON.stringify(options.json)
            headers["content-type"] = "application/json"
          }
          const response = await fetch(url + path, { method, headers, ...(body === undefined ? {} : { body }) })
          const text = await response.text()
          let parsed: unknown = undefined
          try {
            parsed = text === "" ? undefined : JSON.parse(text)
          } catch {
            parsed = undefined
          }
          return { status: response.status, body: parsed, text, headers: response.headers }
        })
    })
  })
)

/**
 * The full app with test settings, plus extra layers (e.g. a test task handler) merged into its services.
 * Models default to deterministic trigram embeddings and no language model.
 */
export const testApp = <E, R, E2 = never, R2 = never>(
  overrides: Partial<EngramSettings> = {},
  extra?: Layer.Layer<never, E, R>,
  models: Layer.Layer<Embeddings | Llm, E2, R2> = OfflineTestModels as Layer.Layer<Embeddings | Llm, E2, R2>
) => {
  // Consolidation after retain is off unless a test turns it on (`enableObservations: true`): background
  // observations would otherwise change the memory counts and take the scripted model replies of other tests.
  const settings = { ...freshDatabaseSettings(), host: "127.0.0.1", port: 0, enableObservations: false, ...overrides }
  const app = AppWith(EngramConfig.layerWith(settings), models)
  const withExtra = extra === undefined ? app : Layer.provideMerge(extra as Layer.Layer<never>, app)
  return Layer.provideMerge(serverHandle, withExtra)
}

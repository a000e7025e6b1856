/**
 * The scripted model server (`ScriptedOpenAi.ts`) as a test app's language model: the `Scripted` service the tests
 * script and read, the models layer built from its address, and the app that starts both. One copy of the set-up
 * the LLM tests had each declared; it must not hold any one test's replies (those stay in the test's file).
 */
import type { Duration } from "effect"
import { Context, Effect, Layer } from "effect"
import type { LlmSettings } from "../../layers/models/llm/LlmConfig.ts"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import * as LlmLive from "../../layers/models/llm/LlmLive.ts"
import type { EngramSettings } from "../../src/config/EngramConfig.ts"
import type { Embeddings } from "../../src/models/Embeddings.ts"
import type { Llm, LlmPurpose } from "../../src/models/Llm.ts"
import { trigramEmbeddings } from "./FakeModels.ts"
import type { ScriptedOpenAi, ScriptedReply } from "./ScriptedOpenAi.ts"
import { scriptedOpenAi } from "./ScriptedOpenAi.ts"
import { testApp } from "./TestServer.ts"

/** The scripted server of the layer a test runs in: each layer that provides it starts its own. */
export class Scripted extends Context.Service<Scripted, ScriptedOpenAi>()("test/support/ScriptedLlm/Scripted") {}

/** Starts a scripted server for as long as the layer lives. */
export const scriptedServer = Layer.effect(Scripted, scriptedOpenAi)

/** Trigram embeddings and the language model that `settings` describes from the scripted server's address. */
export const scriptedModels = (settings: (server: ScriptedOpenAi) => LlmSettings) =>
  Layer.unwrap(Effect.gen(function*() {
    const server = yield* Scripted
    return Layer.mergeAll(trigramEmbeddings(), LlmLive.layerWith(settings(server)))
  }))

/** One purpose on the scripted server as `model`, the others offline; no retry, so a scripted failure fails at once. */
export const onePurpose =
  (purpose: LlmPurpose, model: string, timeout: Duration.Input = "5 seconds") =>
  (server: ScriptedOpenAi): LlmSettings =>
    llmSettings({
      provider: "none",
      purposes: { [purpose]: { provider: "openai", baseUrl: server.baseUrl, model } },
      retryBase: "5 millis",
      maxRetries: 0,
      timeout
    })

/** `testApp` on `models` together with the scripted server they read, which its tests reach as `Scripted`. */
export const scriptedApp = <E, R, E2, R2>(
  overrides: Partial<EngramSettings>,
  models: Layer.Layer<Embeddings | Llm, E2, R2>,
  extra?: Layer.Layer<never, E, R>
) => testApp(overrides, extra, models).pipe(Layer.provideMerge(scriptedServer))

/** The text of a chat request's last message and of its system message. */
export const lastUser = (body: any): string => String(body?.messages?.at(-1)?.content ?? "")
export const systemOf = (body: any): string => String(body?.messages?.[0]?.content ?? "")

/**
 * Reflect's set-up: every purpose but retain (which extracts offline, so every model request is reflect's or an
 * opinion's) on the scripted server as "reflector", answered by `route`, with one retry and a ten-second timeout.
 */
export const reflectorModels = (route: (body: any) => ScriptedReply) =>
  scriptedModels((server) => {
    server.setFallback(route)
    return llmSettings({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "reflector",
      retryBase: "5 millis",
      maxRetries: 1,
      timeout: "10 seconds",
      purposes: { retain: { provider: "none" } }
    })
  })

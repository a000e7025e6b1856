/**
 * Forgetting an entity, seen by reflect with a language model (a scripted OpenAI-compatible server on loopback that
 * records every prompt), over the real HTTP server on both tiers. Before the forget the same reflect sends the
 * entity's memories to the model and forms an opinion from them (an opinion that does not name the entity); after
 * it, no prompt of the reflect (its searches of mental models, observations and memories) carries the entity's name
 * or content, nor do the answer's cited memories, and the opinion built on the forgotten facts is gone with them.
 * The other entity's memory is still found and cited. (Reflect without a model is covered by `Forget.test.ts`.)
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import type { ScriptedReply } from "../../support/ScriptedOpenAi.ts"
import { lastUser, reflectorModels, Scripted, scriptedApp, systemOf } from "../../support/ScriptedLlm.ts"

const bank = "forget-reflect-llm"
const base = bankPath(bank)
const name = "Zephyrine Okafor"
const about = [
  "Zephyrine Okafor keeps the spare office key under the blue flowerpot.",
  "Zephyrine Okafor checks the spare office key every Friday."
]
const kept = "Marguerite Delacroix has a copy of the spare office key."
const question = "Where is the spare office key kept?"
/** Words only the entity's memories (and the opinion formed from them) hold. */
const secrets = ["Zephyrine", "Okafor", "flowerpot"]
const opinion = "Hiding the spare office key under a flowerpot is a security risk."

/** Replies by kind of prompt; each reflect queues its own decisions. */
const decisions: Array<unknown> = []
const route = (body: any): ScriptedReply => {
  const reply = (value: unknown): ScriptedReply => ({ content: JSON.stringify(value) })
  if (systemOf(body).includes("You keep the opinions")) {
    // An opinion from the first answer (which quotes the forgotten memory), none from any other.
    return reply({ opinions: lastUser(body).includes("flowerpot") ? [{ text: opinion, confidence: 0.7 }] : [] })
  }
  if (lastUser(body).includes("The memory bank holds this opinion")) return reply({ stances: [] })
  if (lastUser(body).includes("Decide the next step") || lastUser(body).includes("\"reflect_action\"")) {
    return reply(decisions.shift() ?? { tool: "answer", query: null, answer: "Nothing more to add." })
  }
  if (lastUser(body).includes("Answer the question now")) return { content: "Nothing more to add." }
  return { status: 400, body: { error: { message: "unexpected prompt" } } }
}

const app = scriptedApp({}, reflectorModels(route))

/** A reflect that searches memories for the key and answers `answer`: its response and every prompt it sent. */
const reflect = (answer: string) =>
  Effect.gen(function*() {
    const scripted = yield* Scripted
    const since = scripted.chatRequests().length
    decisions.push(
      { tool: "recall", query: "spare office key", answer: null },
      { tool: "answer", query: null, answer }
    )
    const response = yield* ok("POST", `${base}/reflect`, { query: question, include: { facts: {} } })
    const prompts = scripted.chatRequests().slice(since)
      .filter((request) => !systemOf(request.body).includes("You keep the opinions"))
      .map((request) => JSON.stringify(request.body.messages))
    return { response, prompts: prompts.join("\n") }
  })

layer(app, { excludeTestServices: true, timeout: "3 minutes" })("forget: reflect with a language model", (it) => {
  it.effect("after forgetting an entity, no reflect prompt, answer or cited memory carries it; its opinion went too", () =>
    Effect.gen(function*() {
      yield* ok("POST", `${base}/memories`, {
        items: [
          ...about.map((content) => ({ content, entities: [{ text: name }] })),
          { content: kept, entities: [{ text: "Marguerite Delacroix" }] }
        ]
      })
      yield* settled(bank)

      const before = yield* reflect("The spare office key is under the blue flowerpot.")
      for (const word of secrets) assert.include(before.prompts, word, "the model saw the memories before the forget")
      assert.include(JSON.stringify(before.response.body.based_on.memories), "flowerpot")
      yield* settled(bank)
      const opinions = (yield* ok("GET", `${base}/memories/list?type=opinion&limit=100`)).body.items as Array<any>
      assert.deepStrictEqual(opinions.map((item) => item.text), [opinion], "an opinion was formed from the answer")

      const report = (yield* ok("POST", `${base}/forget`, { entity: name })).body
      assert.include(report.memory_ids, opinions[0].id, "the opinion resting on the forgotten facts is forgotten")
      yield* settled(bank)
      assert.deepStrictEqual((yield* ok("GET", `${base}/memories/list?type=opinion&limit=100`)).body.items, [])

      const after = yield* reflect("Marguerite Delacroix has a copy of the spare office key.")
      assert.isNotEmpty(after.prompts)
      const answered = JSON.stringify(after.response.body)
      for (const word of secrets) {
        const at = after.prompts.indexOf(word)
        assert.strictEqual(
          at,
          -1,
          `a prompt still carries "${word}": ${after.prompts.slice(Math.max(0, at - 300), at + 100)}`
        )
        assert.notInclude(answered, word)
      }
      const cited = after.response.body.based_on.memories.map((memory: any) => memory.text as string)
      assert.isTrue(cited.some((text: string) => text.startsWith(kept)), cited.join("\n"))
      assert.include(after.prompts, "Marguerite Delacroix")
    }))
})

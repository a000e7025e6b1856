/**
 * The offline defaults on a real conversation: retaining a LoCoMo conversation with GloVe embeddings and the
 * offline extractor stores every turn with its metadata, resolves relative dates against the session date and
 * lists the two speakers as the top entities.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ModelsLive } from "../../../layers/Models.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../../support/Locomo.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "/v1/default/banks/locomo"

layer(testApp({}, undefined, ModelsLive), { excludeTestServices: true, timeout: "3 minutes" })(
  "LoCoMo retain",
  (it) => {
    it.effect.skipIf(!locomoAvailable)(
      "every turn's facts are stored with its metadata, dates and speakers",
      () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const sample = loadLocomo()[0]!
          const sessions = sessionsOf(sample)
          const turns = sessions.flatMap((session) => session.items)
          for (const session of sessions) {
            const response = yield* server.request("POST", `${bank}/memories`, { json: { items: session.items } })
            assert.strictEqual(response.status, 200, response.text)
          }
          const stored = new Map<string, Array<any>>()
          for (let offset = 0;; offset += 1000) {
            const page = yield* server.request("GET", `${bank}/memories/list?limit=1000&offset=${offset}`)
            for (const item of page.body.items) {
              stored.set(item.metadata.dia_id, [...(stored.get(item.metadata.dia_id) ?? []), item])
            }
            if (page.body.items.length < 1000) break
          }
          const missing = turns.filter((turn) => !stored.has(turn.metadata.dia_id)).map((turn) => turn.metadata.dia_id)
          // A turn may repeat an earlier one word for word ("Thanks!"): deduplication then keeps the first.
          assert.isAtMost(
            missing.length,
            Math.ceil(turns.length * 0.02),
            `turns without memories: ${missing.join(", ")}`
          )

          // "I went to a LGBTQ support group yesterday" was said on 8 May 2023.
          const supportGroup = stored.get("D1:3")![0]
          assert.strictEqual(supportGroup.occurred_start, "2023-05-07T00:00:00.000Z")
          assert.strictEqual(supportGroup.mentioned_at, "2023-05-08T13:56:00.000Z")
          assert.include(supportGroup.entities, sample.conversation.speaker_a)

          const entities = yield* server.request("GET", `${bank}/entities?limit=5`)
          const top = entities.body.items.slice(0, 2).map((entity: any) => entity.canonical_name).sort()
          assert.deepStrictEqual(top, [sample.conversation.speaker_a, sample.conversation.speaker_b].sort())

          const stats = yield* server.request("GET", `${bank}/stats`)
          for (const type of ["temporal", "semantic", "entity"]) {
            assert.isAbove(stats.body.links_by_link_type[type] ?? 0, 0, type)
          }
        }),
      180_000
    )
  }
)

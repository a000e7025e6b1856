/**
 * Offline consolidation on a real conversation: the first sessions of a LoCoMo conversation retained with the
 * embedded defaults (GloVe vectors, no language model) are consolidated in the background into observations that
 * summarise rather than copy — per speaker and topic, without greetings or questions, dated, bounded in length —
 * and recall of type `observation` finds them with the turns they came from.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ModelsLive } from "../../../layers/Models.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../../support/Locomo.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const bank = "/v1/default/banks/locomo-observations"
const sessionsRetained = 6

layer(testApp({ enableObservations: true }, undefined, ModelsLive), {
  excludeTestServices: true,
  timeout: "3 minutes"
})("LoCoMo consolidation", (it) => {
  it.effect.skipIf(!locomoAvailable)(
    "a retained conversation becomes compact, dated observations per speaker and topic",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sample = loadLocomo()[0]!
        const speakers = [sample.conversation.speaker_a, sample.conversation.speaker_b]
        // Observations off while the sessions are retained, then on: one consolidation run over all of them, so the
        // observations do not depend on how the retains fell into runs (which the thread's timing decides).
        assert.strictEqual((yield* server.request("PUT", bank, { json: { enable_observations: false } })).status, 200)
        for (const session of sessionsOf(sample).slice(0, sessionsRetained)) {
          const response = yield* server.request("POST", `${bank}/memories`, { json: { items: session.items } })
          assert.strictEqual(response.status, 200, response.text)
        }
        assert.strictEqual((yield* server.request("PATCH", bank, { json: { enable_observations: true } })).status, 200)
        const stats = yield* eventually(
          server.request("GET", `${bank}/stats`),
          (r) => r.body.pending_consolidation === 0 && r.body.pending_operations === 0
        )
        const facts = stats.body.nodes_by_fact_type.world + stats.body.nodes_by_fact_type.experience
        const list = yield* server.request("GET", `${bank}/memories/list?type=observation&limit=1000`)
        const observations: Array<any> = list.body.items
        assert.strictEqual(observations.length, stats.body.total_observations)
        // A summary, not a copy: far fewer observations than facts, several of them built from many facts.
        assert.isAtLeast(observations.length, 10)
        assert.isAtMost(observations.length, facts / 2)
        assert.isAtLeast(observations.filter((o) => o.source_fact_ids.length >= 3).length, 5)

        const byId = new Map<string, any>()
        for (let offset = 0;; offset += 1000) {
          const page = yield* server.request("GET", `${bank}/memories/list?limit=1000&offset=${offset}`)
          for (const item of page.body.items) byId.set(item.id, item)
          if (page.body.items.length < 1000) break
        }
        for (const observation of observations) {
          assert.isTrue(speakers.some((speaker) => observation.text.startsWith(`${speaker} — `)), observation.text)
          assert.notInclude(observation.text, "?")
          assert.isAtMost(observation.text.split(/\s+/).length, 130, observation.text)
          assert.notMatch(observation.text, /good to see you|talk to you soon/i)
          for (const id of observation.source_fact_ids) assert.strictEqual(byId.get(id)?.type !== "observation", true)
        }
        // "I went to a LGBTQ support group yesterday" (D1:3, said 8 May 2023) is part of Caroline's support topic.
        const group = observations.find((o) =>
          o.source_fact_ids.some((id: string) => byId.get(id)?.metadata.dia_id === "D1:3")
        )
        assert.isDefined(group, observations.map((o) => o.text).join("\n"))
        assert.match(group.text, new RegExp(`^${speakers[0]} — support`), group.text)

        const recalled = yield* server.request("POST", `${bank}/memories/recall`, {
          json: {
            query: "What did Caroline find at the LGBTQ support group?",
            types: ["observation"],
            include: { source_facts: {} }
          }
        })
        assert.strictEqual(recalled.status, 200, recalled.text)
        const top3 = recalled.body.results.slice(0, 3)
        assert.isTrue(top3.some((result: any) => result.id === group.id), top3.map((r: any) => r.text).join("\n"))
        assert.isTrue(Object.values(recalled.body.source_facts).some((fact: any) => fact.metadata.dia_id === "D1:3"))
      }),
    180_000
  )
})

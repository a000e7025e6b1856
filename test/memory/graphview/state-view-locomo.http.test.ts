/**
 * Issue 15's acceptance on a real conversation: the first sessions of a LoCoMo conversation plus two crafted facts
 * ("Alice works at Acme", later "Alice no longer works at Acme"), retained with the offline defaults. The anomaly
 * report holds the contradiction with its correction, graph intelligence shows Alice as changed or contradictory
 * with the evidence, investigate answers "what changed about Alice?" with an evidence path through her facts, and
 * recall for "Where does Alice work?" ranks the newer fact first.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ModelsLive } from "../../../layers/Models.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../../support/Locomo.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "/v1/default/banks/state-view-locomo"
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString()

layer(testApp({}, undefined, ModelsLive), { excludeTestServices: true, timeout: "3 minutes" })(
  "state view on LoCoMo",
  (it) => {
    it.effect.skipIf(!locomoAvailable)(
      "the contradiction, Alice's change, its evidence path and the current fact first",
      () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const post = (path: string, json: unknown) => server.request("POST", `${bank}${path}`, { json })
          for (const session of sessionsOf(loadLocomo()[0]!).slice(0, 4)) {
            const retained = yield* post("/memories", { items: session.items })
            assert.strictEqual(retained.status, 200, retained.text)
          }
          for (
            const item of [
              { content: "Alice works at Acme.", timestamp: daysAgo(40) },
              { content: "Alice no longer works at Acme.", timestamp: daysAgo(3) }
            ]
          ) {
            const retained = yield* post("/memories", { items: [item] })
            assert.strictEqual(retained.status, 200, retained.text)
          }
          const list = yield* server.request("GET", `${bank}/memories/list?q=Alice&limit=50`)
          const older = list.body.items.find((item: any) => item.text === "Alice works at Acme.")
          const newer = list.body.items.find((item: any) => item.text === "Alice no longer works at Acme.")
          assert.isDefined(older, list.text)
          assert.isDefined(newer, list.text)

          const anomalies = yield* post("/anomaly/intelligence", { anomaly_types: ["contradiction"] })
          assert.strictEqual(anomalies.status, 200, anomalies.text)
          const event = anomalies.body.events.find((e: any) =>
            e.unit_ids.includes(older.id) && e.unit_ids.includes(newer.id)
          )
          assert.isDefined(event, anomalies.text)
          const correction = event.corrections.find((c: any) => c.correction_type === "confidence_adjustment")
          assert.strictEqual(correction.target_unit_id, older.id)
          assert.isBelow(correction.confidence_delta, 0)

          const intelligence = yield* server.request("GET", `${bank}/graph/intelligence?limit=100&node_kind=entity`)
          assert.strictEqual(intelligence.status, 200, intelligence.text)
          const alice = intelligence.body.nodes.find((node: any) => node.title === "Alice")
          assert.isDefined(alice, intelligence.text)
          assert.include(["changed", "contradictory"], alice.status)
          assert.includeMembers(alice.evidence_ids, [older.id, newer.id])
          assert.isTrue(intelligence.body.change_events.some((e: any) => e.node_id === alice.id))

          const investigated = yield* post("/graph/investigate", { query: "what changed about Alice?" })
          assert.strictEqual(investigated.status, 200, investigated.text)
          assert.include(investigated.body.focal_node_ids, alice.id, investigated.text)
          const pathIds = JSON.stringify(investigated.body.evidence_path)
          assert.isTrue(pathIds.includes(older.id) || pathIds.includes(newer.id), pathIds)

          const recalled = yield* post("/memories/recall", { query: "Where does Alice work?" })
          assert.strictEqual(recalled.status, 200, recalled.text)
          const ids: Array<string> = recalled.body.results.map((result: any) => result.id)
          assert.include(ids, newer.id, recalled.text)
          assert.isTrue(!ids.includes(older.id) || ids.indexOf(newer.id) < ids.indexOf(older.id), recalled.text)
        })
    )
  }
)

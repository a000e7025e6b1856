/**
 * Requests that belong on a bank's owner reach it from any node: a synchronous retain sent to the client is run by
 * the owner, whose warm brain takes it at once (the next recall's keyword index, read from that brain, finds it),
 * and influence analytics, computed from the brain's graph, come from the owner too. A write the client runs
 * itself (a document deleted, a repo reset) reaches the owner's brain, and graph intelligence cached on the client
 * follows writes the owner ran. PostgreSQL tier only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeCluster, metricsOf, request, shardsSpread, until } from "../support/ClusterNodes.ts"
import { databaseTier } from "../support/TestDatabase.ts"

const shards = 12

const requestsBy = (metrics: string, kind: string, way: string) =>
  Number(
    new RegExp(`engram_cluster_requests(?:_total)?\\{(?=[^}]*kind="${kind}")(?=[^}]*way="${way}")[^}]*\\} (\\d+)`)
      .exec(metrics)?.[1] ?? 0
  )

describe.skipIf(databaseTier === "pglite")("cluster routing to a bank's owner", () => {
  it.live(
    "a synchronous retain and influence analytics sent to the client run on the owner",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const cluster = makeCluster(databaseTier, shards)
        const runners = [yield* cluster.start("runner"), yield* cluster.start("runner")]
        const client = yield* cluster.start("client")
        yield* shardsSpread(runners, shards)
        const bank = `${client.url}/v1/default/banks/orchard`

        assert.isBelow((yield* request(bank, "PUT", { name: "orchard" })).status, 300)
        const first = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Mira planted quince trees by the wall." }]
        })
        assert.strictEqual(first.status, 200, JSON.stringify(first.body))
        // The owner's brain is built by this recall and stays warm.
        const warm = yield* request(`${bank}/memories/recall`, "POST", { query: "quince trees" })
        assert.strictEqual(warm.status, 200, JSON.stringify(warm.body))

        const second = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Tobias grafted medlar scions in March." }]
        })
        assert.strictEqual(second.status, 200, JSON.stringify(second.body))
        assert.strictEqual(second.body.memories_created, 1)
        // Found by the keyword strategy, which reads the owner's brain: the owner applied the write it ran.
        const recalled = yield* request(`${bank}/memories/recall`, "POST", {
          query: "medlar scions grafted",
          trace: true
        })
        assert.strictEqual(recalled.status, 200, JSON.stringify(recalled.body))
        const listed = yield* request(`${bank}/memories/list?limit=100`, "GET")
        const medlar = listed.body.items.find((item: any) => String(item.text).includes("medlar"))
        assert.isDefined(medlar, JSON.stringify(listed.body))
        const keyword = recalled.body.trace.strategies.keyword.candidates.map((candidate: any) => candidate.id)
        assert.include(keyword, medlar.id, JSON.stringify(recalled.body.trace.strategies.keyword))

        // A write the client makes itself (a document deleted) reaches the owner's brain too.
        const noted = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Petra pruned the espalier pears.", document_id: "note-1" }]
        })
        assert.strictEqual(noted.status, 200, JSON.stringify(noted.body))
        const keywordIds = (query: string) =>
          Effect.map(request(`${bank}/memories/recall`, "POST", { query, trace: true }), (response) =>
            response.body.trace.strategies.keyword.candidates.map((candidate: any) =>
              candidate.id
            ) as Array<string>)
        const espalier = yield* keywordIds("espalier pears pruned")
        assert.strictEqual(espalier.length, 1)
        const deleted = yield* request(`${bank}/documents/note-1`, "DELETE")
        assert.isBelow(deleted.status, 300, JSON.stringify(deleted.body))
        yield* until(
          "the owner's brain dropped the deleted document's memory",
          async () =>
            (await Effect.runPromise(keywordIds("espalier pears pruned"))).includes(espalier[0]!) ? undefined : true,
          10_000
        )

        // A repo reset made through the client reaches the owner's brain: a memory retained after the commit is gone
        // from its keyword index (the reset moved the bank's change-log horizon, and the owner rebuilt).
        const repo = yield* request(`${bank}/repos/enable`, "POST", {})
        assert.strictEqual(repo.status, 200, JSON.stringify(repo.body))
        const lantern = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Odile hung paper lanterns in the barn." }]
        })
        assert.strictEqual(lantern.status, 200, JSON.stringify(lantern.body))
        assert.strictEqual((yield* keywordIds("paper lanterns Odile")).length, 1)
        const reset = yield* request(`${client.url}/v1/default/repos/${repo.body.repo_id}/reset-hard`, "POST", {
          commit_id: repo.body.head_commit_id,
          force: true
        })
        assert.strictEqual(reset.status, 200, JSON.stringify(reset.body))
        yield* until("the owner's brain saw the reset", async () =>
          (await Effect.runPromise(keywordIds("paper lanterns Odile"))).length === 0 ? true : undefined, 10_000)

        // Graph intelligence read through the client is cached there, but follows a write the owner ran.
        const surface = () =>
          request(`${bank}/graph/intelligence`, "GET")
        assert.strictEqual((yield* surface()).status, 200)
        assert.strictEqual((yield* surface()).body.cached, true, "an unchanged bank's view comes from the cache")
        const saffron = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Zora planted saffron crocus bulbs." }]
        })
        assert.strictEqual(saffron.status, 200, JSON.stringify(saffron.body))
        assert.strictEqual(
          (yield* surface()).body.cached,
          false,
          "the client's cached view outlived a write on the owner"
        )

        const influence = yield* request(`${bank}/brain/influence`, "GET")
        assert.strictEqual(influence.status, 200, JSON.stringify(influence.body))
        assert.strictEqual(influence.body.bank_id, "orchard")
        const missing = yield* request(`${client.url}/v1/default/banks/no-such-bank/brain/influence`, "GET")
        assert.strictEqual(missing.status, 404, "the owner's 404 comes back unchanged")

        const clientMetrics = yield* Effect.promise(() =>
          metricsOf(client.url)
        )
        const runnerMetrics = yield* Effect.promise(() => Promise.all(runners.map((runner) => metricsOf(runner.url))))
        const served = (kind: string) =>
          runnerMetrics.reduce((sum, text) => sum + requestsBy(text, kind, "for_another_node"), 0)
        assert.strictEqual(requestsBy(clientMetrics, "retain", "forwarded"), 5, clientMetrics)
        assert.strictEqual(requestsBy(clientMetrics, "retain", "owner"), 0, "a client owns no bank")
        assert.strictEqual(served("retain"), 5)
        assert.strictEqual(requestsBy(clientMetrics, "influence", "forwarded"), 1, clientMetrics)
        assert.strictEqual(served("influence"), 2, "the bank's view and the missing bank's 404")
        assert.strictEqual(requestsBy(clientMetrics, "retain", "local_fallback"), 0)
      })),
    180_000
  )
})

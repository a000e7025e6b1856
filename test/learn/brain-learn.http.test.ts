/**
 * Learning between two engram servers on loopback in one test: B learns A's bank over REST and through A's
 * `.brain` export, then B's recall finds A's memories (tagged with their source, deduplicated on a second learn).
 * A learn identical to one still pending or running answers `deduplicated: true` — held pending behind a learn whose remote
 * (a gate server) does not answer until the test lets it. The remote key reaches the remote and nothing else; a
 * server with the default settings refuses loopback remotes. A's reads at a distinctive hour reach B's activity
 * model on both paths (A's histogram over REST, the `.brain` file's activity section), weighted by the 1:1 rule,
 * and a repeated learn replaces that source's counts instead of adding them again.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const remoteFacts = [
  "Zorblat the engineer fixed the quantum router in Lisbon.",
  "The quantum router lab moved to the third floor in March.",
  "Mirela calibrates the photon counters every Tuesday."
]

/** A remote that holds `/version` until released (then answers 503 to every retry), recording request headers. */
const gateServer = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<
      { url: string; seen: Array<IncomingHttpHeaders>; arrived: Promise<void>; release: () => void; close: () => void }
    >(
      (resolve) => {
        const seen: Array<IncomingHttpHeaders> = []
        const waiting: Array<ServerResponse> = []
        let arrive: () => void = () => {}
        const arrived = new Promise<void>((done) => (arrive = done))
        let released = false
        const refuse = (response: ServerResponse) => {
          response.writeHead(503, { "content-type": "application/json" })
          response.end(JSON.stringify({ detail: "closed" }))
        }
        const server = createServer((request, response) => {
          seen.push(request.headers)
          if (released) return refuse(response)
          waiting.push(response)
          arrive()
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resolve({
            url: `http://127.0.0.1:${port}`,
            seen,
            arrived,
            release: () => {
              released = true
              for (const response of waiting.splice(0)) refuse(response)
            },
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        })
      }
    )
  ),
  (gate) => Effect.sync(() => gate.close())
)

const serverB = testApp({ brain: { ...defaultBrainSettings, learnAllowPrivateNetworks: true } })

layer(serverB, { excludeTestServices: true, timeout: "3 minutes" })("brain learn", (it) => {
  it.effect("B learns A's memories over REST and from A's .brain file; recall in B finds them", () =>
    Effect.scoped(Effect.gen(function*() {
      // Server A: a second engram on loopback, default settings (it refuses loopback remotes itself).
      // Its own memo map: built with the test's, A would share B's memoized layers (and be B).
      const aContext = yield* Layer.buildWithMemoMap(testApp(), Layer.makeMemoMapUnsafe(), yield* Effect.scope)
      const a = Context.get(aContext, TestServer)
      assert.notStrictEqual(a.url, (yield* TestServer).url)
      const b = yield* TestServer
      const retained = yield* a.request("POST", `${bank("source")}/memories`, {
        json: { items: remoteFacts.map((content) => ({ content })) }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      // Six reads of A's bank at an hour twelve hours from now, so no retain of this test falls on it.
      const readHour = (new Date().getUTCHours() + 12) % 24
      const aSql = Context.get(aContext, SqlClient.SqlClient)
      for (let day = 1; day <= 6; day++) {
        yield* aSql`INSERT INTO memory_access_events (bank_id, access_id, source, item_type, item_id, score, accessed_at)
          VALUES ('source', ${`seed-${day}`}, 'recall', 'memory', ${`m-${day}`}, 0.5, ${new Date(
          Date.UTC(2024, 3, day, readHour, 20)
        )})`
          .pipe(Effect.orDie)
      }
      const aHistogram = yield* a.request("GET", `${bank("source")}/sub-routine/histogram`)
      assert.strictEqual(aHistogram.status, 200, aHistogram.text)
      const scoreAt = (body: any, hour: number): number => body.histogram.find((p: any) => p.hour_utc === hour).score
      const aReadShare = scoreAt(aHistogram.body, readHour)
      assert.isAbove(aReadShare, 0)
      const histogramOf = (bankId: string) =>
        Effect.map(b.request("GET", `${bank(bankId)}/sub-routine/histogram`), (response) => {
          assert.strictEqual(response.status, 200, response.text)
          return response.body
        })
      /** B's share of the read hour is the learned weight's part of A's share (the 1:1 rule, B having none there). */
      const assertLearnedShare = (body: any, learnedWeight: number) =>
        assert.closeTo(
          scoreAt(body, readHour),
          learnedWeight * aReadShare / body.sample_count,
          1e-3,
          JSON.stringify(body)
        )
      yield* b.request("POST", `${bank("dest")}/memories`, {
        json: { items: [{ content: "Local note: the lab coffee machine is broken." }] }
      })
      yield* b.request("POST", `${bank("mirror")}/memories`, {
        json: { items: [{ content: "Mirror bank placeholder." }] }
      })

      // Hold B's actor for bank `dest` on a learn whose remote does not answer yet.
      const gate = yield* gateServer
      const secret = "remote-key-do-not-store-8f3a"
      const held = yield* b.request("POST", `${bank("dest")}/brain/learn`, {
        json: { remote_endpoint: gate.url, remote_bank_id: "gated", remote_api_key: secret }
      })
      assert.strictEqual(held.status, 200, held.text)
      yield* Effect.promise(() => gate.arrived)
      assert.strictEqual(gate.seen[0]?.authorization, `Bearer ${secret}`)
      // The same learn again while the first is running (not only while it waits) is that learn.
      const again = yield* b.request("POST", `${bank("dest")}/brain/learn`, {
        json: { remote_endpoint: gate.url, remote_bank_id: "gated", remote_api_key: secret }
      })
      assert.strictEqual(again.body.deduplicated, true, again.text)
      assert.strictEqual(again.body.operation_id, held.body.operation_id)

      const learnRequest = { remote_endpoint: a.url, remote_bank_id: "source", learning_type: "structured" }
      const first = yield* b.request("POST", `${bank("dest")}/brain/learn`, { json: learnRequest })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(first.body.deduplicated, false)
      const second = yield* b.request("POST", `${bank("dest")}/brain/learn`, { json: learnRequest })
      assert.strictEqual(second.body.deduplicated, true)
      assert.strictEqual(second.body.operation_id, first.body.operation_id)

      gate.release()
      const settled = (bankId: string, id: string) =>
        eventually(
          b.request("GET", `${bank(bankId)}/operations/${id}`),
          (r) => ["completed", "failed"].includes(r.body?.status)
        )
      const heldDone = yield* settled("dest", held.body.operation_id)
      assert.strictEqual(heldDone.body.status, "failed")
      assert.match(heldDone.body.error_message, /status 503/)
      assert.notInclude(heldDone.text, secret)

      const rest = yield* settled("dest", first.body.operation_id)
      assert.strictEqual(rest.body.status, "completed", rest.text)
      const restResult = yield* b.request("GET", `${bank("dest")}/operations/${first.body.operation_id}/result`)
      assert.notInclude(restResult.text, secret)
      const outcome = restResult.body.result ?? restResult.body
      assert.strictEqual(outcome.learning_type_effective, "structured", restResult.text)
      assert.strictEqual(outcome.remote_brain_used, false)
      assert.strictEqual(outcome.stored_memories, remoteFacts.length, restResult.text)
      assert.strictEqual(outcome.activity.merged, true, restResult.text)
      assert.strictEqual(outcome.activity.via, "rest_histogram")
      assert.strictEqual(outcome.activity.source, `${new URL(a.url).host}/source`)
      assert.strictEqual(outcome.activity.remote_events, aHistogram.body.sample_count)
      assert.strictEqual(outcome.activity.replaced, false)
      const destHistogram = yield* histogramOf("dest")
      assert.isAbove(scoreAt(destHistogram, readHour), 0)
      assert.strictEqual(
        outcome.activity.learned_weight,
        Math.min(aHistogram.body.sample_count, Math.max(outcome.activity.own_events, 24))
      )
      assertLearnedShare(destHistogram, outcome.activity.learned_weight)

      const recall = (bankId: string, query: string) =>
        Effect.map(
          b.request("POST", `${bank(bankId)}/memories/recall`, { json: { query, budget: "mid" } }),
          (response) => {
            assert.strictEqual(response.status, 200, response.text)
            return response.body.results as Array<{ text: string; tags: Array<string> }>
          }
        )
      const found = (yield* recall("dest", "who fixed the quantum router")).find((result) =>
        result.text === remoteFacts[0]
      )
      assert.isDefined(found)
      assert.includeMembers(found!.tags, ["brain-learn", "source:source"])

      // Learning the same again stores nothing new: every memory is already in the bank.
      const repeat = yield* b.request("POST", `${bank("dest")}/brain/learn`, { json: learnRequest })
      yield* settled("dest", repeat.body.operation_id)
      const repeated = yield* b.request("GET", `${bank("dest")}/operations/${repeat.body.operation_id}/result`)
      const repeatOutcome = repeated.body.result ?? repeated.body
      assert.strictEqual(repeatOutcome.stored_memories, 0, repeated.text)
      assert.strictEqual(repeatOutcome.skipped_duplicates, remoteFacts.length)
      // The same source again replaces its counts: the learned weight stays what it was.
      assert.strictEqual(repeatOutcome.activity.replaced, true, repeated.text)
      assert.strictEqual(repeatOutcome.activity.learned_sources, 1)
      assert.strictEqual(repeatOutcome.activity.learned_weight, outcome.activity.learned_weight)
      assertLearnedShare(yield* histogramOf("dest"), outcome.activity.learned_weight)

      // The .brain path: A offers its export, B reads the full copy from it.
      const distilled = yield* b.request("POST", `${bank("mirror")}/brain/learn`, {
        json: { remote_endpoint: a.url, remote_bank_id: "source", learning_type: "distilled", mode: "full_copy" }
      })
      assert.strictEqual(distilled.status, 200, distilled.text)
      const brainDone = yield* settled("mirror", distilled.body.operation_id)
      assert.strictEqual(brainDone.body.status, "completed", brainDone.text)
      const brainResult = yield* b.request("GET", `${bank("mirror")}/operations/${distilled.body.operation_id}/result`)
      const brainOutcome = brainResult.body.result ?? brainResult.body
      assert.strictEqual(brainOutcome.remote_brain_used, true, brainResult.text)
      assert.strictEqual(brainOutcome.learning_type_effective, "distilled")
      assert.strictEqual(brainOutcome.stored_memories, remoteFacts.length)
      // A's export carried its own activity model; the mirror's histogram now has A's read hour.
      assert.strictEqual(brainOutcome.activity.via, "brain_file", brainResult.text)
      assert.strictEqual(brainOutcome.activity.remote_events, aHistogram.body.sample_count)
      const mirrorHistogram = yield* histogramOf("mirror")
      assertLearnedShare(mirrorHistogram, brainOutcome.activity.learned_weight)
      const predictions = yield* b.request("GET", `${bank("mirror")}/sub-routine/predictions?horizon_hours=24`)
      assert.include(predictions.body.predictions.map((p: any) => p.hour_utc), readHour, predictions.text)
      const mirrored = (yield* recall("mirror", "photon counters calibration")).map((result) => result.text)
      // A's offline extractor appended its date note to the stored text; the fact itself is what was learned.
      assert.isTrue(mirrored.some((text) => text.startsWith(remoteFacts[2]!)), JSON.stringify(mirrored))

      // A keeps the default: loopback remotes are refused with the setting named.
      const refused = yield* a.request("POST", `${bank("source")}/brain/learn`, {
        json: { remote_endpoint: b.url, remote_bank_id: "dest" }
      })
      assert.strictEqual(refused.status, 400, refused.text)
      assert.match(
        refused.body.detail,
        /remote_endpoint: .*not a public address.*SERVICE_API_BRAIN_LEARN_ALLOW_PRIVATE_NETWORKS/
      )
      const malformed = yield* b.request("POST", `${bank("dest")}/brain/learn`, {
        json: { remote_endpoint: "not a url", remote_bank_id: "x" }
      })
      assert.strictEqual(malformed.status, 400)
      assert.match(malformed.body.detail, /remote_endpoint/)
    })))
})

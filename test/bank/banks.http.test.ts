/** Banks over HTTP: create/update rules, validation (400 naming the field, nothing changed), profile, stats, config, delete. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { testApp, TestServer } from "../support/TestServer.ts"

const bankPath = (id: string) => `/v1/default/banks/${id}`

layer(testApp(), { excludeTestServices: true })("banks", (it) => {
  it.effect("PUT creates a bank with defaults, PATCH changes only the given fields, GET lists it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const created = yield* server.request("PUT", bankPath("alpha"), { json: { name: "Alpha" } })
      assert.strictEqual(created.status, 200)
      assert.deepStrictEqual(created.body.disposition, { skepticism: 3, literalism: 3, empathy: 3 })
      assert.strictEqual(created.body.retain_extraction_mode, "concise")

      const patched = yield* server.request("PATCH", bankPath("alpha"), {
        json: { retain_mission: "Only facts about travel", disposition_empathy: 5, retain_extraction_mode: "verbose" }
      })
      assert.strictEqual(patched.status, 200)
      assert.strictEqual(patched.body.name, "Alpha")
      assert.strictEqual(patched.body.retain_mission, "Only facts about travel")
      assert.strictEqual(patched.body.retain_extraction_mode, "verbose")
      assert.deepStrictEqual(patched.body.disposition, { skepticism: 3, literalism: 3, empathy: 5 })

      const list = yield* server.request("GET", "/v1/default/banks")
      const alpha = list.body.banks.find((bank: any) => bank.bank_id === "alpha")
      assert.strictEqual(alpha.name, "Alpha")
      assert.deepStrictEqual(Object.keys(alpha).sort(), [
        "bank_id",
        "created_at",
        "disposition",
        "last_write_at",
        "mission",
        "name",
        "updated_at"
      ])
    }))

  it.effect("deprecated mission and background map onto reflect_mission; unknown presets are ignored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const viaMission = yield* server.request("PUT", bankPath("legacy"), { json: { mission: "Be a helpful coach" } })
      assert.strictEqual(viaMission.body.reflect_mission, "Be a helpful coach")
      const viaBackground = yield* server.request("PATCH", bankPath("legacy"), {
        json: { background: "A travel agent" }
      })
      assert.strictEqual(viaBackground.body.reflect_mission, "A travel agent")
      assert.strictEqual(viaBackground.body.mission, "A travel agent")
      const preset = yield* server.request("PATCH", bankPath("legacy"), { json: { bank_preset: "no-such-preset" } })
      assert.strictEqual(preset.status, 200)
      assert.strictEqual(preset.body.bank_preset, null)
    }))

  it.effect("a disposition update needs all three traits as integers 1-5; shortcuts set one trait", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bankPath("traits"), {
        json: { disposition: { skepticism: 1, literalism: 2, empathy: 3 } }
      })
      const partial = yield* server.request("PATCH", bankPath("traits"), { json: { disposition: { skepticism: 5 } } })
      assert.strictEqual(partial.status, 400)
      const fields = partial.body.errors.map((error: any) => error.field)
      assert.include(fields, "disposition.literalism")
      assert.include(fields, "disposition.empathy")
      const shortcut = yield* server.request("PATCH", bankPath("traits"), { json: { disposition_skepticism: 4 } })
      assert.deepStrictEqual(shortcut.body.disposition, { skepticism: 4, literalism: 2, empathy: 3 })
    }))

  it.effect("bad input to every bank route answers 400 naming the field and changes nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bankPath("strict"), { json: { name: "Strict", retain_chunk_size: 800 } })
      const before = yield* server.request("GET", bankPath("strict") + "/config")

      const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
        ["PUT", bankPath("strict"), { name: 42 }, "name"],
        [
          "PUT",
          bankPath("strict"),
          { disposition: { skepticism: 0, literalism: 3, empathy: 3 } },
          "disposition.skepticism"
        ],
        [
          "PUT",
          bankPath("strict"),
          { disposition: { skepticism: 2.5, literalism: 3, empathy: 3 } },
          "disposition.skepticism"
        ],
        ["PATCH", bankPath("strict"), { retain_extraction_mode: "poetic" }, "retain_extraction_mode"],
        ["PATCH", bankPath("strict"), { disposition_empathy: 6 }, "disposition_empathy"],
        ["PATCH", bankPath("strict"), { enable_observations: "yes" }, "enable_observations"],
        ["PATCH", bankPath("strict"), { retain_chunk_size: "big" }, "retain_chunk_size"],
        [
          "PUT",
          bankPath("strict") + "/profile",
          { disposition: { skepticism: 9, literalism: 3, empathy: 3 } },
          "disposition.skepticism"
        ],
        ["PATCH", bankPath("strict") + "/config", { updates: { retain_chunk_size: -5 } }, "updates.retain_chunk_size"]
      ]
      for (const [method, path, json, field] of cases) {
        const response = yield* server.request(method, path, { json })
        assert.strictEqual(response.status, 400, `${method} ${path} ${JSON.stringify(json)}`)
        assert.isString(response.body.detail)
        assert.include(response.body.errors.map((error: any) => error.field), field)
      }
      const malformed = yield* server.request("PATCH", bankPath("strict"), {
        body: "{not json",
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(malformed.status, 400)
      assert.isString(malformed.body.detail)
      const badId = yield* server.request("PUT", bankPath("has%20space"), { json: {} })
      assert.strictEqual(badId.status, 400)
      assert.include(badId.body.errors.map((error: any) => error.field), "bank_id")

      const after = yield* server.request("GET", bankPath("strict") + "/config")
      assert.deepStrictEqual(after.body, before.body)
    }))

  it.effect("reading the profile of a missing bank creates it with defaults; PUT profile sets the disposition", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const profile = yield* server.request("GET", bankPath("auto-created") + "/profile")
      assert.strictEqual(profile.status, 200)
      assert.deepStrictEqual(profile.body, {
        bank_id: "auto-created",
        name: "auto-created",
        disposition: { skepticism: 3, literalism: 3, empathy: 3 },
        mission: "",
        background: null
      })
      const updated = yield* server.request("PUT", bankPath("auto-created") + "/profile", {
        json: { disposition: { skepticism: 5, literalism: 1, empathy: 2 } }
      })
      assert.deepStrictEqual(updated.body.disposition, { skepticism: 5, literalism: 1, empathy: 2 })
      const list = yield* server.request("GET", "/v1/default/banks")
      assert.isTrue(list.body.banks.some((bank: any) => bank.bank_id === "auto-created"))
    }))

  it.effect("unknown banks answer 404 JSON with detail", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (
        const [method, path] of [
          ["GET", bankPath("ghost") + "/stats"],
          ["GET", bankPath("ghost") + "/config"],
          ["PATCH", bankPath("ghost")],
          ["DELETE", bankPath("ghost")],
          ["DELETE", bankPath("ghost") + "/config"]
        ] as const
      ) {
        const response = yield* server.request(method, path, method === "PATCH" ? { json: { name: "x" } } : undefined)
        assert.strictEqual(response.status, 404, `${method} ${path}`)
        assert.include(response.body.detail, "ghost")
      }
    }))

  it.effect("config: PATCH accepts {updates} and plain fields, GET shows effective values and overrides, DELETE resets", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bankPath("configured"), { json: { name: "Configured" } })
      const wrapped = yield* server.request("PATCH", bankPath("configured") + "/config", {
        json: { updates: { retain_chunk_size: 1024, enable_observations: false } }
      })
      assert.strictEqual(wrapped.status, 200)
      assert.strictEqual(wrapped.body.config.retain_chunk_size, 1024)
      assert.deepStrictEqual(wrapped.body.overrides, { retain_chunk_size: 1024, enable_observations: false })
      const plain = yield* server.request("PATCH", bankPath("configured") + "/config", {
        json: { observations_mission: "Track preferences" }
      })
      assert.strictEqual(plain.body.overrides.observations_mission, "Track preferences")
      assert.strictEqual(plain.body.overrides.retain_chunk_size, 1024)
      const reset = yield* server.request("DELETE", bankPath("configured") + "/config")
      assert.deepStrictEqual(reset.body.overrides, {})
      assert.strictEqual(reset.body.config.retain_chunk_size, 512)
      const bank = yield* server.request("GET", bankPath("configured") + "/profile")
      assert.strictEqual(bank.body.name, "Configured")
    }))

  it.effect("stats count the bank's real rows, and deleting a bank removes everything it owns", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      yield* server.request("PUT", bankPath("doomed"), { json: {} })
      yield* server.request("PUT", bankPath("survivor"), { json: {} })
      for (const bank of ["doomed", "survivor"]) {
        yield* sql`INSERT INTO documents (bank_id, document_id) VALUES (${bank}, 'doc-1')`
        for (const [id, type] of [["a", "world"], ["b", "experience"], ["c", "world"]]) {
          yield* sql`INSERT INTO memory_units (id, bank_id, text, fact_type, content_hash, document_id)
            VALUES (${`${bank}-${id}`}, ${bank}, ${`fact ${id}`}, ${type}, ${id}, 'doc-1')`
        }
        yield* sql`INSERT INTO memory_links (bank_id, from_id, to_id, link_type)
          VALUES (${bank}, ${`${bank}-a`}, ${`${bank}-b`}, 'temporal'), (${bank}, ${`${bank}-a`}, ${`${bank}-c`}, 'entity')`
      }
      const stats = yield* server.request("GET", bankPath("doomed") + "/stats")
      assert.strictEqual(stats.status, 200)
      assert.strictEqual(stats.body.total_nodes, 3)
      assert.strictEqual(stats.body.total_links, 2)
      assert.strictEqual(stats.body.total_documents, 1)
      assert.strictEqual(stats.body.nodes_by_fact_type.world, 2)
      assert.strictEqual(stats.body.links_by_link_type.temporal, 1)
      assert.strictEqual(stats.body.links_breakdown.world.entity, 1)
      assert.strictEqual(stats.body.pending_consolidation, 3)

      const deleted = yield* server.request("DELETE", bankPath("doomed"))
      assert.strictEqual(deleted.status, 200)
      assert.isTrue(deleted.body.success)
      const left = yield* sql`SELECT
          (SELECT count(*)::int FROM memory_units WHERE bank_id = 'doomed') AS units,
          (SELECT count(*)::int FROM memory_links WHERE bank_id = 'doomed') AS links,
          (SELECT count(*)::int FROM documents WHERE bank_id = 'doomed') AS documents,
          (SELECT count(*)::int FROM memory_units WHERE bank_id = 'survivor') AS others`
      assert.deepStrictEqual(left[0], { units: 0, links: 0, documents: 0, others: 3 })
      const gone = yield* server.request("GET", bankPath("doomed") + "/stats")
      assert.strictEqual(gone.status, 404)
    }))
})

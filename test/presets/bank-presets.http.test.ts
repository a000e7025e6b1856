/**
 * Bank presets over HTTP: `codebase` merges its settings under explicit fields, seeds one directive and three
 * pinned mental models once (stable ids, `preset:codebase`), unknown presets change nothing, `/version` lists them,
 * and a seeding failure does not fail the bank update.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`
const modelIds = [
  "9e3febb0-54c2-5dbf-ad60-a8af70bf437e",
  "ab066fc1-0753-5185-99d5-217986e6a704",
  "fe1d3e9a-1844-5ab0-a206-ab2b97540847"
]

layer(testApp(), { excludeTestServices: true })("bank presets", (it) => {
  it.effect("codebase on create merges its settings (explicit fields win) and seeds its playbook once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const created = yield* server.request("PUT", bank("preset-code"), {
        json: { bank_preset: "Codebase", reflect_mission: "Only answer about the billing service." }
      })
      assert.strictEqual(created.status, 200, created.text)
      assert.strictEqual(created.body.bank_preset, "codebase")
      assert.strictEqual(created.body.retain_extraction_mode, "custom")
      assert.include(created.body.retain_custom_instructions, "file paths")
      assert.strictEqual(created.body.enable_observations, true)
      assert.strictEqual(created.body.reflect_mission, "Only answer about the billing service.")
      assert.include(created.body.retain_mission, "code base")
      assert.include(created.body.observations_mission, "code base")

      const directives = yield* server.request("GET", `${bank("preset-code")}/directives`)
      assert.deepStrictEqual(directives.body.items.map((d: any) => [d.name, d.priority, d.tags]), [
        ["Codebase: evidence-first answers", 40, ["preset:codebase"]]
      ])
      const models = yield* server.request("GET", `${bank("preset-code")}/mental-models`)
      assert.strictEqual(models.status, 200, models.text)
      assert.deepStrictEqual(models.body.items.map((m: any) => m.id).sort(), [...modelIds].sort())
      for (const model of models.body.items) {
        assert.include(model.tags, "preset:codebase")
        assert.isAbove(model.content.length, 50)
      }

      // Applying it again (and an update) seeds nothing twice; an edited seeded model is kept as edited.
      yield* server.request("PATCH", `${bank("preset-code")}/mental-models/${modelIds[0]}`, {
        json: { name: "Our workflow" }
      })
      const again = yield* server.request("PATCH", bank("preset-code"), { json: { bank_preset: "codebase" } })
      assert.strictEqual(again.status, 200, again.text)
      assert.strictEqual(again.body.reflect_mission, "Only answer about the billing service.")
      const directivesAfter = yield* server.request("GET", `${bank("preset-code")}/directives`)
      assert.strictEqual(directivesAfter.body.items.length, 1)
      const modelsAfter = yield* server.request("GET", `${bank("preset-code")}/mental-models`)
      assert.strictEqual(modelsAfter.body.items.length, 3)
      assert.include(modelsAfter.body.items.map((m: any) => m.name), "Our workflow")
    }))

  it.effect("explicit fields override the preset on update; unknown presets are ignored; /version lists presets", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank("preset-update"), { json: { name: "plain" } })
      const updated = yield* server.request("PATCH", bank("preset-update"), {
        json: { bank_preset: "codebase", enable_observations: false, retain_extraction_mode: "verbose" }
      })
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual(updated.body.enable_observations, false)
      assert.strictEqual(updated.body.retain_extraction_mode, "verbose")
      assert.include(updated.body.retain_mission, "code base")

      const unknown = yield* server.request("PUT", bank("preset-unknown"), { json: { bank_preset: "gardening" } })
      assert.strictEqual(unknown.status, 200, unknown.text)
      assert.strictEqual(unknown.body.bank_preset, null)
      assert.strictEqual(unknown.body.retain_mission, null)
      const none = yield* server.request("GET", `${bank("preset-unknown")}/directives`)
      assert.deepStrictEqual(none.body.items, [])

      const version = yield* server.request("GET", "/version")
      assert.deepStrictEqual(version.body.bank_presets, ["codebase"])
    }))

  it.effect("a seeding failure is logged and the bank update still succeeds", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      yield* server.request("PUT", bank("preset-broken"), { json: {} })
      // Make the mental model insert fail for this bank only.
      yield* sql`
        CREATE FUNCTION refuse_preset_models() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.bank_id = 'preset-broken' THEN RAISE EXCEPTION 'refused for the test'; END IF;
          RETURN NEW;
        END $$`
      yield* sql`CREATE TRIGGER refuse_preset_models BEFORE INSERT ON mental_models
        FOR EACH ROW EXECUTE FUNCTION refuse_preset_models()`
      const updated = yield* server.request("PATCH", bank("preset-broken"), { json: { bank_preset: "codebase" } })
      yield* sql`DROP TRIGGER refuse_preset_models ON mental_models`
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual(updated.body.bank_preset, "codebase")
      assert.strictEqual(updated.body.enable_observations, true)
      const models = yield* server.request("GET", `${bank("preset-broken")}/mental-models`)
      assert.deepStrictEqual(models.body.items, [])
    }))
})

/**
 * The versioning plan derived from the catalog: bank-owned tables and their children are versioned, exclusions
 * and secret columns are not, global ids and the columns that refer to them are found, parents restore first.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Catalog, CatalogColumn } from "../../src/repos/VersionedTables.ts"
import { planTables } from "../../src/repos/VersionedTables.ts"

const column = (table: string, name: string, type: "text" | "text[]" | "int" = "text"): CatalogColumn => ({
  table,
  column: name,
  isArray: type === "text[]",
  isText: type !== "int",
  generated: false
})

const catalog: Catalog = {
  columns: [
    column("banks", "bank_id"),
    column("banks", "name"),
    column("banks", "created_at"),
    column("memory_units", "id"),
    column("memory_units", "bank_id"),
    column("memory_units", "text"),
    column("memory_units", "source_fact_ids", "text[]"),
    column("memory_units", "access_count", "int"),
    { ...column("memory_units", "search_vector"), generated: true },
    { ...column("memory_units", "metadata"), isText: false, isJson: true },
    column("unit_entities", "unit_id"),
    column("unit_entities", "entity_id"),
    column("entities", "id"),
    column("entities", "bank_id"),
    column("webhooks", "id"),
    column("webhooks", "bank_id"),
    column("webhooks", "secret"),
    column("operations", "id"),
    column("operations", "bank_id"),
    column("orphans", "id"),
    column("edges", "snapshot_id"),
    column("edges", "weight", "int"),
    column("edges", "bank_id"),
    column("counters", "bank_id"),
    column("counters", "n", "int")
  ],
  constraints: [
    { table: "banks", kind: "p", columns: ["bank_id"], refTable: null, refColumns: [] },
    { table: "memory_units", kind: "p", columns: ["id"], refTable: null, refColumns: [] },
    { table: "memory_units", kind: "f", columns: ["bank_id"], refTable: "banks", refColumns: ["bank_id"] },
    { table: "unit_entities", kind: "p", columns: ["unit_id", "entity_id"], refTable: null, refColumns: [] },
    { table: "unit_entities", kind: "f", columns: ["unit_id"], refTable: "memory_units", refColumns: ["id"] },
    { table: "unit_entities", kind: "f", columns: ["entity_id"], refTable: "entities", refColumns: ["id"] },
    { table: "entities", kind: "p", columns: ["id"], refTable: null, refColumns: [] },
    { table: "webhooks", kind: "p", columns: ["id"], refTable: null, refColumns: [] },
    { table: "operations", kind: "p", columns: ["id"], refTable: null, refColumns: [] },
    { table: "counters", kind: "p", columns: ["bank_id", "n"], refTable: null, refColumns: [] }
  ]
}

describe("planTables", () => {
  const plans = planTables(catalog)
  const byName = new Map(plans.map((plan) => [plan.name, plan]))

  it("versions bank-owned tables and their children, not the excluded ones", () => {
    assert.deepStrictEqual([...byName.keys()].sort(), [
      "banks",
      "counters",
      "edges",
      "entities",
      "memory_units",
      "unit_entities",
      "webhooks"
    ])
    assert.deepStrictEqual(byName.get("unit_entities")!.scope, {
      _tag: "Parent",
      column: "unit_id",
      parent: "memory_units",
      parentColumn: "id"
    })
  })

  it("leaves out bank_id, generated, secret and read-counter columns", () => {
    assert.deepStrictEqual(byName.get("memory_units")!.columns, ["id", "text", "source_fact_ids", "metadata"])
    assert.deepStrictEqual(byName.get("webhooks")!.columns, ["id"])
    assert.deepStrictEqual(byName.get("banks")!.columns, ["name"])
    assert.deepStrictEqual(byName.get("banks")!.key, [])
  })

  it("finds global ids and every column that refers to them", () => {
    assert.deepStrictEqual(byName.get("memory_units")!.identities, ["id"])
    assert.deepStrictEqual(byName.get("memory_units")!.references.map((r) => [r.column, r.isArray]), [
      ["id", false],
      ["source_fact_ids", true]
    ])
    assert.deepStrictEqual(byName.get("unit_entities")!.references.map((r) => r.column), ["unit_id", "entity_id"])
  })

  it("orders parents before children, banks first", () => {
    const order = plans.map((plan) => plan.name)
    assert.strictEqual(order[0], "banks")
    assert.isBelow(order.indexOf("memory_units"), order.indexOf("unit_entities"))
    assert.isBelow(order.indexOf("entities"), order.indexOf("unit_entities"))
  })

  it("marks JSON columns for id renaming and says how keys compare", () => {
    assert.deepStrictEqual(byName.get("memory_units")!.jsonColumns, ["metadata"])
    assert.deepStrictEqual(byName.get("webhooks")!.jsonColumns, [])
    assert.isTrue(byName.get("memory_units")!.textKey)
    assert.isTrue(byName.get("unit_entities")!.textKey)
    // A non-text key compares as the JSON key text; a keyless table is replaced whole on restore.
    assert.deepStrictEqual(byName.get("counters")!.key, ["n"])
    assert.isFalse(byName.get("counters")!.textKey)
    assert.isNull(byName.get("edges")!.key)
  })
})

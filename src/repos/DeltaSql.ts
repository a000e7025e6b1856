/**
 * SQL text for applying a row delta to a bank in place: delete rows by key, update changed rows and insert added
 * rows from stored row objects, so a checkout or reset writes only the rows that differ. `$1` is the target bank,
 * `$2` a JSON array (of keys, or of row hashes). Keys are in the repo's (root-bank) ids; `ToLocal` renames them
 * to a hidden workspace's own ids on the way in.
 */
import type { IdMapping } from "./RowSql.ts"
import { insertedColumns, mappedColumns, quote, scopeWhere } from "./RowSql.ts"
import { literal, type VersionedTable, withLiveJson } from "./VersionedTables.ts"

const mappedKey = (plan: VersionedTable, value: string, column: string, mapping: IdMapping) => {
  const isReference = plan.references.some((r) => r.column === column && !r.isArray)
  if (mapping._tag !== "ToLocal" || !isReference) return value
  return `coalesce((SELECT m.local_id FROM repo_id_maps m WHERE m.workspace_bank_id = ${mapping.param} AND m.canonical_id = ${value} LIMIT 1), ${value})`
}

/** Deletes the rows of bank `$1` whose keys are in `$2` (a JSON array of key texts as `rowsCte` computes them). */
export const deleteKeysSql = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>, mapping: IdMapping) => {
  const key = plan.key ?? []
  const scope = scopeWhere(plan, plans, "t")
  if (key.length === 0) return `DELETE FROM ${quote(plan.name)} t WHERE ${scope} AND jsonb_array_length($2::jsonb) > 0`
  if (!plan.textKey) {
    return `DELETE FROM ${quote(plan.name)} t WHERE ${scope}
      AND jsonb_build_array(${
      key.map((c) => `t.${quote(c)}`).join(", ")
    })::text IN (SELECT value FROM jsonb_array_elements_text($2::jsonb))`
  }
  const parts = key.map((column, i) => mappedKey(plan, `(a.v::jsonb ->> ${i})`, column, mapping))
  return `DELETE FROM ${quote(plan.name)} t WHERE ${scope}
    AND (${key.map((c) => `t.${quote(c)}`).join(", ")}) IN (SELECT ${
    parts.join(", ")
  } FROM jsonb_array_elements_text($2::jsonb) a(v))`
}

/** The stored rows named by `$2` (a JSON array of row hashes; a hash named twice gives two rows), as record `r`. */
const rowsByHash = (plan: VersionedTable) =>
  `jsonb_array_elements_text($2::jsonb) a(h)
    JOIN repo_objects o ON o.hash = a.h
    CROSS JOIN LATERAL jsonb_populate_record(NULL::${quote(plan.name)}, o.body) r`

/** Updates the rows of bank `$1` that share a key with the stored rows `$2`, to those rows' values. */
export const updateRowsSql = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>, mapping: IdMapping) => {
  const key = plan.key ?? []
  const values = plan.columns.filter((c) => !key.includes(c))
  if (values.length === 0) return null
  const match = key.map((c) => `t.${quote(c)} = s.${quote(c)}`)
  // Secret keys of JSON columns are not in the stored rows: the live row keeps its own.
  const assigned = (c: string) => `${quote(c)} = ${withLiveJson(plan.name, c, `s.${quote(c)}`, `t.${quote(c)}`)}`
  return `UPDATE ${quote(plan.name)} t SET ${values.map(assigned).join(", ")}
    FROM (SELECT ${mappedColumns(plan, "r", mapping)} FROM ${rowsByHash(plan)}) s
    WHERE ${[scopeWhere(plan, plans, "t"), ...match].join(" AND ")}`
}

/** Inserts the stored rows `$2` into bank `$1`. */
export const insertRowsSql = (plan: VersionedTable, mapping: IdMapping) => {
  const { target, values } = insertedColumns(plan, mapping)
  return `INSERT INTO ${quote(plan.name)} (${target.join(", ")})
    SELECT ${values} FROM ${rowsByHash(plan)} WHERE $1::text IS NOT NULL`
}

/** Gives the global ids in `column` of the stored rows `$2` a stable local name in workspace `$1`. */
export const mapIdsOfRowsSql = (column: string) =>
  `INSERT INTO repo_id_maps (workspace_bank_id, local_id, canonical_id)
    SELECT $1, md5($1 || ':' || v)::uuid::text, v FROM (
      SELECT DISTINCT o.body ->> ${literal(column)} AS v
      FROM repo_objects o WHERE o.hash IN (SELECT value FROM jsonb_array_elements_text($2::jsonb))) s
    WHERE v IS NOT NULL
    ON CONFLICT DO NOTHING`

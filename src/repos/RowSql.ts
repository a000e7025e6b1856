/**
 * SQL text for reading a bank's rows as canonical JSON and writing them back, built from a table plan. Only
 * catalog names (quoted) are spliced into the text; every value is a bind parameter. Ids are renamed through
 * `repo_id_maps` when rows move between a root bank and a hidden workspace or a fork (see `IdMapping`).
 */
import type { VersionedTable } from "./VersionedTables.ts"

export const quote = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

/**
 * How ids are renamed on the way: `none` keeps them; `toCanonical` reads a workspace in root-bank ids;
 * `toLocal` writes root-bank ids as the workspace's own. `param` is the placeholder of the workspace bank id.
 */
export type IdMapping =
  | { readonly _tag: "None" }
  | { readonly _tag: "ToCanonical"; readonly param: string }
  | { readonly _tag: "ToLocal"; readonly param: string }

export const noMapping: IdMapping = { _tag: "None" }

/** The WHERE clause selecting one bank's rows of a table; `$1` is the bank id. */
export const scopeWhere = (
  plan: VersionedTable,
  plans: ReadonlyMap<string, VersionedTable>,
  alias: string,
  depth = 0
): string => {
  if (plan.scope._tag === "Bank") return `${alias}.bank_id = $1`
  const parent = plans.get(plan.scope.parent)!
  const inner = `p${depth}`
  return `${alias}.${quote(plan.scope.column)} IN (SELECT ${inner}.${quote(plan.scope.parentColumn)} FROM ${
    quote(parent.name)
  } ${inner} WHERE ${scopeWhere(parent, plans, inner, depth + 1)})`
}

const mapped = (value: string, isArray: boolean, mapping: IdMapping) => {
  if (mapping._tag === "None") return value
  const [from, to] = mapping._tag === "ToCanonical" ? ["local_id", "canonical_id"] : ["canonical_id", "local_id"]
  if (!isArray) {
    return `coalesce((SELECT m.${to} FROM repo_id_maps m WHERE m.workspace_bank_id = ${mapping.param} AND m.${from} = ${value} LIMIT 1), ${value})`
  }
  return `CASE WHEN ${value} IS NULL THEN NULL ELSE ARRAY(SELECT coalesce((SELECT m.${to} FROM repo_id_maps m WHERE m.workspace_bank_id = ${mapping.param} AND m.${from} = e.v LIMIT 1), e.v) FROM unnest(${value}) WITH ORDINALITY e(v, i) ORDER BY e.i) END`
}

/** The stored columns read from `alias`, id columns renamed through the mapping. */
export const mappedColumns = (plan: VersionedTable, alias: string, mapping: IdMapping) =>
  plan.columns.map((column) => {
    const reference = plan.references.find((r) => r.column === column)
    const value = `${alias}.${quote(column)}`
    return reference === undefined ? value : `${mapped(value, reference.isArray, mapping)} AS ${quote(column)}`
  }).join(", ")

/**
 * CTE `rb(k, body, h, b)`: one bank's rows of a table as canonical JSON (`body`), its sha256 (`h`), its key
 * (`k`: the primary key as a JSON array; for a keyless table the content hash and an occurrence number) and its
 * bucket `b` (0..255, from the key, so a changed row stays in its bucket).
 */
export const rowsCte = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>, mapping: IdMapping) => {
  const key = plan.key === null
    ? "NULL::text"
    : plan.key.length === 0
    ? "'[]'::text"
    : `jsonb_build_array(${plan.key.map((c) => `x.${quote(c)}`).join(", ")})::text`
  return `WITH x AS MATERIALIZED (SELECT ${mappedColumns(plan, "t", mapping)} FROM ${quote(plan.name)} t WHERE ${
    scopeWhere(plan, plans, "t")
  }),
  r0 AS MATERIALIZED (SELECT ${key} AS k0, to_jsonb(x) AS body FROM x),
  r1 AS MATERIALIZED (SELECT k0, body, encode(sha256(convert_to(body::text, 'UTF8')), 'hex') AS h FROM r0),
  r2 AS MATERIALIZED (SELECT coalesce(k0, h || '#' || row_number() OVER (PARTITION BY h)) AS k, body, h FROM r1),
  rb AS MATERIALIZED (SELECT k, body, h, get_byte(decode(md5(k), 'hex'), 0) AS b FROM r2)`
}

const bucketHash = `encode(sha256(convert_to(string_agg(k || '=' || h, E'\\n' ORDER BY k COLLATE "C"), 'UTF8')), 'hex')`

/** Per bucket: row count and manifest hash. Reads only. */
export const bucketsSql = (cte: string) => `${cte}
  SELECT b, count(*)::int AS n, ${bucketHash} AS bh FROM rb GROUP BY b ORDER BY b`

/**
 * Per bucket: row count and manifest hash; stores the rows and manifests of the buckets whose hash is not the
 * one in `$prev` (a JSON object bucket → hash of the previous commit), answering the bytes newly stored.
 */
export const storeBucketsSql = (cte: string, prev: string) => `${cte},
  buckets AS (SELECT b, count(*)::int AS n, ${bucketHash} AS bh FROM rb GROUP BY b),
  changed AS MATERIALIZED (
    SELECT c.b, c.bh, (SELECT jsonb_object_agg(rb.k, rb.h) FROM rb WHERE rb.b = c.b) AS entries
    FROM buckets c WHERE c.bh IS DISTINCT FROM (${prev}::jsonb ->> c.b::text)),
  new_rows AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (h) h, 'row', body, octet_length(body::text) FROM rb WHERE b IN (SELECT b FROM changed)
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes),
  new_buckets AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT bh, 'bucket', entries, octet_length(entries::text) FROM changed
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes)
  SELECT b, n, bh,
    ((SELECT coalesce(sum(size_bytes), 0) FROM new_rows) + (SELECT coalesce(sum(size_bytes), 0) FROM new_buckets))::bigint AS added
  FROM buckets ORDER BY b`

/** Key → row hash of the rows in the given buckets (`$buckets`: a JSON array of bucket numbers). */
export const entriesSql = (cte: string, buckets: string) => `${cte}
  SELECT k, h FROM rb WHERE b IN (SELECT value::int FROM jsonb_array_elements_text(${buckets}::jsonb))`

/** The row objects of a stored table manifest (`$hash`), as `body`. */
export const storedRowsFrom = (tableHash: string) => `(SELECT o.body FROM repo_objects bm
  CROSS JOIN LATERAL jsonb_each_text(bm.body) e
  JOIN repo_objects o ON o.hash = e.value
  WHERE bm.hash IN (SELECT value FROM jsonb_each_text((SELECT body FROM repo_objects WHERE hash = ${tableHash})))) o`

/** Inserts a stored table into bank `$1`, renaming ids as the mapping says. */
export const insertSql = (plan: VersionedTable, tableHash: string, mapping: IdMapping) => {
  const columns = plan.columns.map(quote)
  const target = plan.hasBankId ? [...columns, "bank_id"] : columns
  const values = plan.hasBankId ? `${mappedColumns(plan, "r", mapping)}, $1` : mappedColumns(plan, "r", mapping)
  return `INSERT INTO ${quote(plan.name)} (${target.join(", ")})
    SELECT ${values} FROM ${storedRowsFrom(tableHash)}
    CROSS JOIN LATERAL jsonb_populate_record(NULL::${quote(plan.name)}, o.body) r
    WHERE $1::text IS NOT NULL` // names the bank parameter even when a child table has no bank_id column
}

/** Writes the bank row's stored settings onto bank `$1` (the bank row itself is never deleted). */
export const updateBankSql = (plan: VersionedTable, tableHash: string) => {
  const columns = plan.columns.map(quote)
  return `UPDATE banks SET (${columns.join(", ")}) = (
    SELECT ${columns.map((c) => `r.${c}`).join(", ")} FROM ${storedRowsFrom(tableHash)}
    CROSS JOIN LATERAL jsonb_populate_record(NULL::banks, o.body) r LIMIT 1)
    WHERE bank_id = $1`
}

/** Gives every global id of a stored table a stable local name in workspace `$1`. */
export const mapIdsSql = (plan: VersionedTable, column: string, tableHash: string) =>
  `INSERT INTO repo_id_maps (workspace_bank_id, local_id, canonical_id)
    SELECT $1, md5($1 || ':' || v)::uuid::text, v FROM (
      SELECT DISTINCT o.body ->> ${`'${column.replaceAll("'", "''")}'`} AS v FROM ${storedRowsFrom(tableHash)}) s
    WHERE v IS NOT NULL
    ON CONFLICT DO NOTHING`

export const deleteSql = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>) =>
  `DELETE FROM ${quote(plan.name)} t WHERE ${scopeWhere(plan, plans, "t")}`

/**
 * SQL text for reading a bank's rows as canonical JSON and writing them back, built from a table plan. Only
 * catalog names (quoted) are spliced into the text; every value is a bind parameter. Ids are renamed through
 * `repo_id_maps` when rows move between a root bank and a hidden workspace or a fork (see `IdMapping`).
 */
import { insertedDefaultsOf, literal, scrubbedJson, type VersionedTable } from "./VersionedTables.ts"

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

/** Ids inside a JSON document, renamed by `repo_map_json` (migration 0023): whole JSON strings equal to a mapped id. */
const mappedJson = (value: string, mapping: IdMapping) =>
  mapping._tag === "None" ? value : `repo_map_json(${value}, ${mapping.param}, ${mapping._tag === "ToLocal"})`

/**
 * The stored columns read from `alias`, id columns (and ids inside JSON columns) renamed through the mapping. Read
 * from a live table (`scrub`), secret keys of JSON columns are emptied (`scrubbedJsonKeys`).
 */
export const mappedColumns = (plan: VersionedTable, alias: string, mapping: IdMapping, scrub = false) =>
  plan.columns.map((column) => {
    const reference = plan.references.find((r) => r.column === column)
    const raw = `${alias}.${quote(column)}`
    if (reference !== undefined) return `${mapped(raw, reference.isArray, mapping)} AS ${quote(column)}`
    if (!plan.jsonColumns.includes(column)) return raw
    const value = scrub ? scrubbedJson(plan.name, column, raw) : raw
    const renamed = mapping._tag === "None" ? value : mappedJson(value, mapping)
    return renamed === raw ? raw : `${renamed} AS ${quote(column)}`
  }).join(", ")

/**
 * CTE `rb(k, body, h, b, b1)`: one bank's rows of a table as canonical JSON (`body`), its sha256 (`h`), its key
 * (`k`: the primary key as a JSON array; for a keyless table the content hash and an occurrence number), its top
 * bucket `b` and its leaf bucket `b1` (0..255 each, from the key, so a changed row stays in its buckets).
 */
export const rowsCte = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>, mapping: IdMapping) => {
  const key = plan.key === null
    ? "NULL::text"
    : plan.key.length === 0
    ? "'[]'::text"
    : `jsonb_build_array(${plan.key.map((c) => `x.${quote(c)}`).join(", ")})::text`
  return `WITH x AS MATERIALIZED (SELECT ${mappedColumns(plan, "t", mapping, true)} FROM ${quote(plan.name)} t WHERE ${
    scopeWhere(plan, plans, "t")
  }),
  r0 AS MATERIALIZED (SELECT ${key} AS k0, to_jsonb(x) AS body FROM x),
  r1 AS MATERIALIZED (SELECT k0, body, encode(sha256(convert_to(body::text, 'UTF8')), 'hex') AS h FROM r0),
  r2 AS MATERIALIZED (SELECT coalesce(k0, h || '#' || row_number() OVER (PARTITION BY h)) AS k, body, h FROM r1),
  rb AS MATERIALIZED (SELECT k, body, h, get_byte(d, 0) AS b, get_byte(d, 1) AS b1
    FROM (SELECT k, body, h, decode(md5(k), 'hex') AS d FROM r2) r3)`
}

/** A leaf bucket's hash: its sorted `key=row hash` lines. */
export const leafHash =
  `encode(sha256(convert_to(string_agg(k || '=' || h, E'\\n' ORDER BY k COLLATE "C"), 'UTF8')), 'hex')`
/** A node's hash: its sorted `leaf number=leaf hash` lines (prefixed, so a node never hashes like a leaf). */
export const nodeHash =
  `encode(sha256(convert_to('node' || E'\\n' || string_agg(b1::text || '=' || lh, E'\\n' ORDER BY b1), 'UTF8')), 'hex')`

/** Leaf and node hashes of every bucket; the table manifest maps top bucket → node hash. */
export const treeCtes = `,
  leaves AS MATERIALIZED (SELECT b, b1, count(*)::int AS n, ${leafHash} AS lh FROM rb GROUP BY b, b1),
  nodes AS MATERIALIZED (SELECT b, sum(n)::int AS n, ${nodeHash} AS bh FROM leaves GROUP BY b)`

/** Per top bucket: row count and node hash. Reads only. */
export const bucketsSql = (cte: string) =>
  `${cte}${treeCtes}
  SELECT b, n, bh FROM nodes ORDER BY b`

/**
 * Per top bucket: row count and node hash; stores the nodes of the top buckets whose hash is not the one in
 * `$prev` (a JSON object bucket → hash of the previous commit), and under them only the leaves (and their rows)
 * whose hash differs from the previous node's, answering the bytes newly stored. Probing every row of a changed
 * top bucket against the object table instead cost 10+ minutes for a one-memory commit at 100k memories (a new
 * memory's ~27 links touch ~27 of 256 top buckets: ~290k rows). A previous value that is a leaf (commits made
 * before nodes existed) matches no node, so all leaves under it are stored, as before.
 * Objects already stored (an unchanged leaf of a changed node, a row another commit holds) are not counted.
 */
export const storeBucketsSql = (cte: string, prev: string) =>
  `${cte}${treeCtes},
  changed AS MATERIALIZED (SELECT b, bh FROM nodes WHERE bh IS DISTINCT FROM (${prev}::jsonb ->> b::text)),
  previous_nodes AS MATERIALIZED (
    SELECT c.b, o.body FROM changed c JOIN repo_objects o ON o.hash = (${prev}::jsonb ->> c.b::text) AND o.kind = 'node'),
  changed_leaf_keys AS MATERIALIZED (
    SELECT l.b, l.b1 FROM leaves l JOIN changed c ON c.b = l.b LEFT JOIN previous_nodes p ON p.b = l.b
    WHERE l.lh IS DISTINCT FROM (p.body ->> l.b1::text)),
  changed_leaves AS MATERIALIZED (
    SELECT b, b1, ${leafHash} AS lh, jsonb_object_agg(k, h) AS entries FROM rb
    WHERE (b, b1) IN (SELECT b, b1 FROM changed_leaf_keys) GROUP BY b, b1),
  changed_nodes AS MATERIALIZED (
    SELECT c.b, c.bh, (SELECT jsonb_object_agg(l.b1::text, l.lh) FROM leaves l WHERE l.b = c.b) AS body FROM changed c),
  new_rows AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (h) h, 'row', body, octet_length(body::text) FROM rb
    WHERE (b, b1) IN (SELECT b, b1 FROM changed_leaf_keys)
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes),
  new_leaves AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (lh) lh, 'bucket', entries, octet_length(entries::text) FROM changed_leaves
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes),
  new_nodes AS (
    INSERT INTO repo_objects (hash, kind, body, size_bytes)
    SELECT DISTINCT ON (bh) bh, 'node', body, octet_length(body::text) FROM changed_nodes
    ON CONFLICT (hash) DO NOTHING RETURNING size_bytes)
  SELECT b, n, bh,
    ((SELECT coalesce(sum(size_bytes), 0) FROM new_rows) + (SELECT coalesce(sum(size_bytes), 0) FROM new_leaves)
      + (SELECT coalesce(sum(size_bytes), 0) FROM new_nodes))::bigint AS added
  FROM nodes ORDER BY b`

/**
 * The leaf buckets under some top-level manifest values (`$tops`: a SQL list of hashes): a node's leaves, or
 * the value itself when it is a leaf (commits made before nodes existed name leaves directly).
 */
export const leavesUnder = (tops: string) =>
  `SELECT lf.hash, lf.body FROM repo_objects lf WHERE lf.kind = 'bucket' AND lf.hash IN (
    SELECT v FROM (${tops}) t(v)
    UNION ALL
    SELECT n.value FROM repo_objects nd CROSS JOIN LATERAL jsonb_each_text(nd.body) n
    WHERE nd.kind = 'node' AND nd.hash IN (SELECT v FROM (${tops}) t2(v)))`

/** Key → row hash of the rows in the given buckets (`$buckets`: a JSON array of bucket numbers). */
export const entriesSql = (cte: string, buckets: string) =>
  `${cte}
  SELECT k, h FROM rb WHERE b IN (SELECT value::int FROM jsonb_array_elements_text(${buckets}::jsonb))`

/** The row objects of a stored table manifest (`$hash`), as `body`; a keyless table's repeated rows repeat. */
export const storedRowsFrom = (tableHash: string) =>
  `(SELECT o.body FROM (${
    leavesUnder(`SELECT value FROM jsonb_each_text((SELECT body FROM repo_objects WHERE hash = ${tableHash}))`)
  }) lf
  CROSS JOIN LATERAL jsonb_each_text(lf.body) e
  JOIN repo_objects o ON o.hash = e.value) o`

/**
 * The columns an insert from stored rows `r` into bank `$1` names, and their values: the stored columns (ids
 * renamed), the bank, and the unversioned `NOT NULL` columns' `insertedDefaults`.
 */
export const insertedColumns = (plan: VersionedTable, mapping: IdMapping) => {
  const defaults = insertedDefaultsOf(plan.name)
  const target = [
    ...plan.columns.map(quote),
    ...(plan.hasBankId ? ["bank_id"] : []),
    ...defaults.map(([c]) => quote(c))
  ]
  const values = [mappedColumns(plan, "r", mapping), ...(plan.hasBankId ? ["$1"] : []), ...defaults.map(([, v]) => v)]
  return { target, values: values.join(", ") }
}

/** Inserts a stored table into bank `$1`, renaming ids as the mapping says. */
export const insertSql = (plan: VersionedTable, tableHash: string, mapping: IdMapping) => {
  const { target, values } = insertedColumns(plan, mapping)
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
      SELECT DISTINCT o.body ->> ${literal(column)} AS v FROM ${storedRowsFrom(tableHash)}) s
    WHERE v IS NOT NULL
    ON CONFLICT DO NOTHING`

export const deleteSql = (plan: VersionedTable, plans: ReadonlyMap<string, VersionedTable>) =>
  `DELETE FROM ${quote(plan.name)} t WHERE ${scopeWhere(plan, plans, "t")}`

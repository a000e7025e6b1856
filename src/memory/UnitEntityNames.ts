/**
 * The entity names (and, for views that show them, the entity types) of a set of memory units, read in one
 * aggregate over the whole set. A subquery per unit would run its own plan once per row (1,000 times for a full
 * graph view); this never does. Callers put their units in a CTE named `picked` with an `id` column and
 * LEFT JOIN the result on `unit_id` (units without entities get no row: coalesce to `'{}'`).
 */
import type { SqlClient } from "effect/sql"

export const entityNamesOfPicked = (sql: SqlClient.SqlClient, options: { readonly types: boolean }) =>
  // Names sort by name (the id only breaks ties, which one bank's unique names never have), and types use the
  // same order so that `entity_types[i]` is the type of `entity_names[i]`.
  sql`SELECT ue.unit_id, array_agg(e.canonical_name ORDER BY e.canonical_name, e.id) AS entity_names${
    options.types ? sql`, array_agg(e.entity_type ORDER BY e.canonical_name, e.id) AS entity_types` : sql``
  }
    FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
    WHERE ue.unit_id IN (SELECT id FROM picked) GROUP BY ue.unit_id`

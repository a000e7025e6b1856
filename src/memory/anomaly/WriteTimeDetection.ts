/**
 * Write-time anomaly detection for one retain batch, inside its transaction and after its links are written.
 * The candidates are the neighbours retain has just linked each new unit to — its semantic neighbours (found
 * through the HNSW index) and its entities' most recent units — read back in one indexed query with their
 * similarity, so detection adds no vector search of its own and never one query per fact. The detectors are
 * pure; this file only gathers what they need and hands their findings to `AnomalyStore`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { storeAnomalies } from "./AnomalyStore.ts"
import { judgePair } from "./Contradiction.ts"
import { detectFlaws, unsupportedOpinion } from "./CausalFlaws.ts"
import type { Detected, Statement } from "./Detected.ts"
import { judgeEntityPair } from "./EntityInconsistency.ts"
import { runSliced } from "../../brain/Sliced.ts"

const causalTypes = ["causes", "caused_by", "enables"]

/** A statement as the driver reads it: `seq` (a bigint column) may arrive as a string. */
type StatementRow = Omit<Statement, "seq"> & { readonly seq: number | string }

const toStatement = (row: StatementRow): Statement => ({
  id: row.id,
  text: row.text,
  factType: row.factType,
  occurredStart: row.occurredStart,
  said: row.said,
  seq: Number(row.seq),
  confidence: row.confidence,
  contentHash: row.contentHash,
  supersededBy: row.supersededBy
})

/**
 * A row of the batch's one read: a linked pair (`kind` 'pair': `freshId`, `id`, `semantic`, `similarity`), an entity
 * a unit of an entity-linked pair mentions ('mention': `id` is the unit, `entityId`, `entityName`) or a statement
 * involved ('statement': the statement columns). The other columns are null.
 */
type ReadRow = StatementRow & {
  readonly kind: "pair" | "mention" | "statement"
  readonly freshId: string | null
  readonly semantic: boolean | null
  readonly similarity: number | null
  readonly entityId: string | null
  readonly entityName: string | null
}

/** The columns of a statement, on the given alias. */
const statementColumns = (sql: SqlClient.SqlClient, alias: string) =>
  sql.literal(
    ["id", "text", "fact_type", "occurred_start", "confidence", "content_hash", "superseded_by"]
      .map((column) => `${alias}.${column}`).join(", ") +
      `, coalesce(${alias}.mentioned_at, ${alias}.occurred_start, ${alias}.created_at) AS said, ${alias}.seq::float8 AS seq`
  )

export const detectWriteTimeAnomalies = Effect.fn("Anomalies.detect")(function*(input: {
  readonly bankId: string
  readonly unitIds: ReadonlyArray<string>
  readonly embeddingModel: string
  readonly dimensions: number
  /** Causal links the batch wrote: none, and there is no causal flaw to look for. */
  readonly causalLinks: number
}) {
  const { bankId, unitIds } = input
  if (unitIds.length === 0) return 0
  const sql = yield* SqlClient.SqlClient
  const dims = sql.literal(String(Math.trunc(input.dimensions)))
  const vector = (alias: string) => sql.literal(`${alias}.embedding::vector(${Math.trunc(input.dimensions)})`)

  // One statement for the whole batch, three kinds of rows: each linked pair once, seen from its new unit (a pair of
  // two new units from either), with its similarity; the entities mentioned by both sides of a pair linked only
  // through entities; and each statement involved (the new ones and those on the other side of a pair) once (many
  // new units share recent neighbours). The new units go as one array parameter; every other id is gathered inside
  // the statement (`= ANY(ARRAY(...))`, an index scan), so no list of the neighbours' ids (1,000-2,000 per batch) is
  // sent. The mentions are rows of their own, not aggregated per pair in SQL: the planner cannot estimate a CTE's
  // rows, and a join of the pairs to a per-pair aggregate was planned as a nested loop that re-aggregated it per pair.
  const ids = [...unitIds]
  const rows = yield* sql<ReadRow>`
    WITH pairs AS (
      SELECT from_id AS fresh_id, to_id AS other_id, link_type FROM memory_links
      WHERE from_id = ANY(${ids}::text[]) AND link_type IN ('semantic', 'entity')
      UNION ALL
      SELECT to_id, from_id, link_type FROM memory_links
      -- Unit ids are unique across banks: the to_id index alone finds these.
      WHERE to_id = ANY(${ids}::text[]) AND link_type = 'semantic'
    ), grouped AS (
      SELECT fresh_id, other_id, bool_or(link_type = 'semantic') AS semantic FROM pairs GROUP BY fresh_id, other_id
    ), kept AS (
      SELECT * FROM (
        -- The dimension checks guard the similarity, not the join: in the WHERE clause the planner guessed they keep
        -- 0.5 % of the rows (it has no statistics on the expression) and read every memory of the bank to hash-join
        -- the few it expected, instead of looking the pairs' units up by id.
        SELECT g.fresh_id, g.other_id, g.semantic,
          CASE WHEN vector_dims(o.embedding) = ${dims} AND vector_dims(u.embedding) = ${dims}
            THEN 1 - (${vector("o")} <=> ${vector("u")}) END AS similarity
        FROM grouped g
        JOIN memory_units u ON u.id = g.fresh_id
        JOIN memory_units o ON o.id = g.other_id
        WHERE o.fact_type IN ('world', 'experience', 'opinion') AND o.embedding_model = ${input.embeddingModel}
      ) judged WHERE similarity IS NOT NULL
    )
    SELECT 'pair' AS kind, k.fresh_id, k.semantic, k.similarity, NULL::text AS entity_id, NULL::text AS entity_name,
      k.other_id AS id, NULL::text AS text, NULL::text AS fact_type, NULL::timestamptz AS occurred_start,
      NULL::real AS confidence, NULL::text AS content_hash, NULL::text AS superseded_by, NULL::timestamptz AS said,
      NULL::float8 AS seq
    FROM kept k
    UNION ALL
    SELECT 'mention', NULL, NULL, NULL, ue.entity_id, e.canonical_name, ue.unit_id,
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
    WHERE ue.unit_id = ANY(ARRAY(
      SELECT fresh_id FROM kept WHERE NOT semantic UNION SELECT other_id FROM kept WHERE NOT semantic))
    UNION ALL
    SELECT 'statement', NULL, NULL, NULL, NULL, NULL, ${statementColumns(sql, "o")}
    FROM memory_units o WHERE o.id = ANY(ARRAY(SELECT unnest(${ids}::text[]) UNION SELECT other_id FROM kept))`
  const pairs: Array<{ freshId: string; id: string; semantic: boolean; similarity: number }> = []
  const statements = new Map<string, Statement>()
  const entitiesOf = new Map<string, Map<string, string>>()
  for (const row of rows) {
    if (row.kind === "pair") {
      pairs.push({ freshId: row.freshId!, id: row.id, semantic: row.semantic!, similarity: row.similarity! })
    } else if (row.kind === "mention") {
      const map = entitiesOf.get(row.id) ?? new Map<string, string>()
      map.set(row.entityId!, row.entityName!)
      entitiesOf.set(row.id, map)
    } else statements.set(row.id, toStatement(row as StatementRow))
  }
  const fresh = unitIds.flatMap((id) => statements.get(id) ?? [])

  // Judged in slices with a turn of the event loop between them: a batch's ~2,000 pairs judged at once held the loop
  // 60 ms (a CPU profile of a server under fifty clients), every bank's requests waiting.
  const found = yield* runSliced(
    (function*() {
      const found: Array<Detected> = []
      const judged = new Set<string>()
      for (const row of pairs) {
        yield
        const own = statements.get(row.freshId)
        // A pair of two new statements is judged once.
        const key = [row.freshId, row.id].sort().join("|")
        if (own === undefined || judged.has(key)) continue
        judged.add(key)
        const other = statements.get(row.id)
        if (row.semantic) {
          if (other !== undefined) found.push(...judgePair(own, other, row.similarity))
          continue
        }
        const theirs = entitiesOf.get(row.id) ?? new Map<string, string>()
        const shared = [...(entitiesOf.get(row.freshId) ?? new Map<string, string>()).entries()]
          .filter(([id]) => theirs.has(id))
        if (shared.length === 0 || other === undefined) continue
        const detected = judgeEntityPair(own, other, row.similarity, {
          entityIds: shared.map(([id]) => id),
          names: shared.map(([, name]) => name)
        })
        if (detected !== null) found.push(detected)
      }
      return found
    })(),
    Effect.yieldNow
  )

  if (input.causalLinks > 0) found.push(...yield* causalFlaws(sql, bankId, unitIds, dims))
  found.push(...yield* unsupportedOpinions(sql, bankId, fresh, input.embeddingModel, dims))
  // A pair found from both of its new units is reported once.
  const distinct = [...new Map(found.map((anomaly) => [`${anomaly.type}:${anomaly.pairKey}`, anomaly])).values()]
  if (distinct.length === 0) return 0
  return yield* storeAnomalies(bankId, distinct, statements)
})

const causalFlaws = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  bankId: string,
  unitIds: ReadonlyArray<string>,
  dims: ReturnType<SqlClient.SqlClient["literal"]>
) {
  const links = yield* sql<{
    readonly fromId: string
    readonly toId: string
    readonly linkType: string
    readonly fromStart: Date | null
    readonly toStart: Date | null
    readonly fromHash: string
    readonly toHash: string
    readonly similarity: number | null
  }>`
    SELECT l.from_id, l.to_id, l.link_type, a.occurred_start AS from_start, b.occurred_start AS to_start,
      a.content_hash AS from_hash, b.content_hash AS to_hash,
      CASE WHEN vector_dims(a.embedding) = ${dims} AND vector_dims(b.embedding) = ${dims}
        THEN 1 - (a.embedding <=> b.embedding) END AS similarity
    FROM memory_links l
    JOIN memory_units a ON a.id = l.from_id
    JOIN memory_units b ON b.id = l.to_id
    WHERE l.bank_id = ${bankId} AND l.link_type IN ${sql.in(causalTypes)}
      AND (l.from_id IN ${sql.in(unitIds)} OR l.to_id IN ${sql.in(unitIds)})`
  if (links.length === 0) return []
  const touched = [...new Set(links.flatMap((link) => [link.fromId, link.toId]))].filter((id) => !unitIds.includes(id))
  // One hop further, so a cycle through an older chain is seen; longer cycles need more hops and are rare.
  const neighbourhood = touched.length === 0 ? [] : yield* sql<{ fromId: string; toId: string; linkType: string }>`
    SELECT from_id, to_id, link_type FROM memory_links
    WHERE bank_id = ${bankId} AND link_type IN ${sql.in(causalTypes)}
      AND (from_id IN ${sql.in(touched)} OR to_id IN ${sql.in(touched)})`
  const units = new Map<string, { occurredStart: Date | null; contentHash: string }>()
  for (const link of links) {
    units.set(link.fromId, { occurredStart: link.fromStart, contentHash: link.fromHash })
    units.set(link.toId, { occurredStart: link.toStart, contentHash: link.toHash })
  }
  return detectFlaws({ links, neighbourhood, units, newIds: unitIds })
})

const unsupportedOpinions = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  bankId: string,
  fresh: ReadonlyArray<Statement>,
  embeddingModel: string,
  dims: ReturnType<SqlClient.SqlClient["literal"]>
) {
  const opinions = fresh.filter((statement) => statement.factType === "opinion")
  if (opinions.length === 0) return []
  const rows = yield* sql<{ id: string; distance: number | null }>`
    SELECT u.id, n.distance FROM memory_units u
    LEFT JOIN LATERAL (
      SELECT o.embedding::vector(${dims}) <=> u.embedding::vector(${dims}) AS distance
      FROM memory_units o
      WHERE o.bank_id = ${bankId} AND o.fact_type IN ('world', 'experience') AND o.embedding_model = ${embeddingModel}
        AND vector_dims(o.embedding) = ${dims}
      ORDER BY o.embedding::vector(${dims}) <=> u.embedding::vector(${dims})
      LIMIT 1) n ON true
    WHERE u.id IN ${sql.in(opinions.map((opinion) => opinion.id))} AND vector_dims(u.embedding) = ${dims}`
  return rows.flatMap((row) => {
    const opinion = opinions.find((candidate) => candidate.id === row.id)
    const detected = opinion === undefined ? null : unsupportedOpinion(opinion, row.distance)
    return detected === null ? [] : [detected]
  })
})

/**
 * A bank's stats figures counted afresh from its tables (every memory and link of the bank): the baseline the stats
 * kept up to date by triggers (`bank_link_counts`) must equal, in the property test and in `bench/bank-stats.ts`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const byKey = (rows: ReadonlyArray<{ key: string; count: number }>) =>
  Object.fromEntries([...rows].sort((a, b) => a.key.localeCompare(b.key)).map((row) => [row.key, row.count]))

export const recountStats = Effect.fn("StatsRecount")(function*(bankId: string) {
  const sql = yield* SqlClient.SqlClient
  const nodes = yield* sql<{ key: string; count: number }>`SELECT fact_type AS key, count(*)::int AS count
    FROM memory_units WHERE bank_id = ${bankId} GROUP BY fact_type`
  const links = yield* sql<{ key: string; count: number }>`SELECT link_type AS key, count(*)::int AS count
    FROM memory_links WHERE bank_id = ${bankId} GROUP BY link_type`
  const breakdown = yield* sql<{ factType: string; linkType: string; count: number }>`
    SELECT u.fact_type, l.link_type, count(*)::int AS count FROM memory_links l
    JOIN memory_units u ON u.id = l.from_id WHERE l.bank_id = ${bankId} GROUP BY u.fact_type, l.link_type
    ORDER BY u.fact_type, l.link_type`
  const documents = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM documents
    WHERE bank_id = ${bankId}`
  const pending = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units
    WHERE bank_id = ${bankId} AND consolidated_at IS NULL AND fact_type IN ('world', 'experience')`
  const linksByFact: Record<string, number> = {}
  const linksBreakdown: Record<string, Record<string, number>> = {}
  for (const row of breakdown) {
    linksByFact[row.factType] = (linksByFact[row.factType] ?? 0) + row.count
    linksBreakdown[row.factType] = { ...linksBreakdown[row.factType], [row.linkType]: row.count }
  }
  return {
    nodes_by_fact_type: { world: 0, experience: 0, observation: 0, opinion: 0, ...byKey(nodes) },
    links_by_link_type: byKey(links),
    links_by_fact_type: linksByFact,
    links_breakdown: linksBreakdown,
    total_documents: documents[0]?.count ?? 0,
    pending_consolidation: pending[0]?.count ?? 0
  }
})

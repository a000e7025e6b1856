/**
 * Tag scoping as SQL over `memory_units.tags`. `any` = shares a tag or is untagged; `all` = has every tag or
 * is untagged; `any_strict` and `all_strict` the same without the untagged. Tag groups nest and/or/not over
 * such leaves; top-level groups are AND-ed.
 */
import type { SqlClient } from "effect/sql"
import type { TagGroup, TagsMatch } from "../../domain/Recall.ts"

type Fragment = ReturnType<SqlClient.SqlClient["and"]>

export const tagCondition = (
  sql: SqlClient.SqlClient,
  column: string,
  tags: ReadonlyArray<string>,
  match: TagsMatch
): Fragment => {
  const c = sql(column)
  const list = [...tags]
  switch (match) {
    case "any":
      return sql`(cardinality(${c}) = 0 OR ${c} && ${list}::text[])`
    case "all":
      return sql`(cardinality(${c}) = 0 OR ${c} @> ${list}::text[])`
    case "any_strict":
      return sql`(${c} && ${list}::text[])`
    case "all_strict":
      return sql`(${c} @> ${list}::text[])`
  }
}

export const groupCondition = (sql: SqlClient.SqlClient, column: string, group: TagGroup): Fragment => {
  if ("tags" in group) return tagCondition(sql, column, group.tags, group.match ?? "any")
  if ("and" in group) {
    return group.and.length === 0
      ? sql`TRUE`
      : sql.and(group.and.map((g) => groupCondition(sql, column, g)))
  }
  if ("or" in group) {
    return group.or.length === 0
      ? sql`FALSE`
      : sql.or(group.or.map((g) => groupCondition(sql, column, g)))
  }
  return sql`NOT ${groupCondition(sql, column, group.not)}`
}

/** The whole tag scope of a request, or TRUE when it has none. */
export const tagScope = (
  sql: SqlClient.SqlClient,
  column: string,
  scope: {
    readonly tags?: ReadonlyArray<string> | null | undefined
    readonly tagsMatch?: TagsMatch | undefined
    readonly tagGroups?: ReadonlyArray<TagGroup> | null | undefined
  }
): Fragment => {
  if (scope.tagGroups && scope.tagGroups.length > 0) {
    return sql.and(scope.tagGroups.map((group) => groupCondition(sql, column, group)))
  }
  if (scope.tags && scope.tags.length > 0) return tagCondition(sql, column, scope.tags, scope.tagsMatch ?? "any")
  return sql`TRUE`
}

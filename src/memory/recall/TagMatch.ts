/**
 * Tag scoping in memory, for the in-memory indexes: exactly the rules `TagFilter.ts` writes as SQL over
 * `memory_units.tags` (`any` = shares a tag or is untagged; `all` = has every tag or is untagged; `any_strict`
 * and `all_strict` the same without the untagged; groups nest and/or/not, top-level groups are AND-ed). The
 * keyword parity test holds the two to the same answers.
 */
import type { TagGroup, TagsMatch } from "../../domain/Recall.ts"

export type TagPredicate = (tags: ReadonlyArray<string>) => boolean

const leaf = (wanted: ReadonlyArray<string>, match: TagsMatch): TagPredicate => {
  const has = (tags: ReadonlyArray<string>) => {
    const own = new Set(tags)
    return {
      some: wanted.some((tag) => own.has(tag)),
      every: wanted.every((tag) => own.has(tag))
    }
  }
  switch (match) {
    case "any":
      return (tags) => tags.length === 0 || has(tags).some
    case "all":
      return (tags) => tags.length === 0 || has(tags).every
    case "any_strict":
      return (tags) => has(tags).some
    case "all_strict":
      return (tags) => has(tags).every
  }
}

const group = (node: TagGroup): TagPredicate => {
  if ("tags" in node) return leaf(node.tags, node.match ?? "any")
  if ("and" in node) {
    const parts = node.and.map(group)
    return (tags) => parts.every((part) => part(tags))
  }
  if ("or" in node) {
    const parts = node.or.map(group)
    return (tags) => parts.some((part) => part(tags))
  }
  const inner = group(node.not)
  return (tags) => !inner(tags)
}

/** The request's tag scope as a predicate, or undefined when it has none (every memory qualifies). */
export const tagMatcher = (scope: {
  readonly tags?: ReadonlyArray<string> | null | undefined
  readonly tagsMatch?: TagsMatch | undefined
  readonly tagGroups?: ReadonlyArray<TagGroup> | null | undefined
}): TagPredicate | undefined => {
  if (scope.tagGroups && scope.tagGroups.length > 0) {
    const parts = scope.tagGroups.map(group)
    return (tags) => parts.every((part) => part(tags))
  }
  if (scope.tags && scope.tags.length > 0) return leaf(scope.tags, scope.tagsMatch ?? "any")
  return undefined
}

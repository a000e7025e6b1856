/**
 * Which observation scopes a fact feeds, from its tags and its `observation_scopes`: `combined` (the default,
 * all tags together), `per_tag`, `all_combinations`, or a custom list of tag lists. A scope is a sorted tag set;
 * observations carry exactly their scope's tags, so scopes never bleed into each other. Pure functions.
 */

export type Scope = ReadonlyArray<string>

/** Past this many tags `all_combinations` would mean hundreds of passes per fact: single tags plus the full set. */
export const maxCombinationTags = 6

const normalize = (tags: ReadonlyArray<string>): Scope => [...new Set(tags.filter((tag) => tag !== ""))].sort()

export const scopeKey = (scope: Scope): string => JSON.stringify(scope)

const subsets = (tags: Scope): Array<Scope> => {
  const out: Array<Scope> = []
  for (let mask = 1; mask < 1 << tags.length; mask++) out.push(tags.filter((_, index) => (mask & (1 << index)) !== 0))
  return out
}

const isTagLists = (value: unknown): value is ReadonlyArray<ReadonlyArray<string>> =>
  Array.isArray(value) && value.every((inner) => Array.isArray(inner) && inner.every((tag) => typeof tag === "string"))

/** The distinct scopes of one fact, in a stable order. An untagged fact feeds the untagged scope `[]`. */
export const scopesOf = (tags: ReadonlyArray<string>, observationScopes: unknown): Array<Scope> => {
  const own = normalize(tags)
  let scopes: Array<Scope>
  if (observationScopes === "per_tag") {
    scopes = own.length === 0 ? [[]] : own.map((tag) => [tag])
  } else if (observationScopes === "all_combinations") {
    scopes = own.length === 0
      ? [[]]
      : own.length > maxCombinationTags
      ? [...own.map((tag) => [tag]), own]
      : subsets(own)
  } else if (isTagLists(observationScopes) && observationScopes.length > 0) {
    // A custom list is used as given (`[[]]` is one untagged, shared scope); an empty list means `combined`.
    scopes = observationScopes.map(normalize)
  } else {
    scopes = [own]
  }
  const seen = new Set<string>()
  return scopes.filter((scope) => {
    const key = scopeKey(scope)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

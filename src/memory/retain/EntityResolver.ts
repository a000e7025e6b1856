/**
 * Maps entity mentions to the bank's entities: an exact alias, else a first name that matches exactly one
 * known full name ("Caroline" → "Caroline Smith"), else a full name whose first name is exactly one known
 * entity ("Caroline Smith" → "Caroline", which then takes the fuller canonical name). Anything else is a new
 * entity. Runs inside the retain transaction, under the bank's write lock.
 */
import { Array as Arr, Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { ExtractedEntity } from "./ExtractedFact.ts"

interface KnownEntity {
  readonly id: string
  canonicalName: string
  type: string | null
  readonly aliases: Set<string>
  isNew: boolean
  renamed: boolean
}

const normalize = (name: string) => name.toLowerCase().replace(/\s+/g, " ").trim()
const firstToken = (alias: string) => alias.split(" ")[0]!

export const resolveEntities = Effect.fn("EntityResolver.resolve")(function*(
  bankId: string,
  mentions: ReadonlyArray<ExtractedEntity>
) {
  const sql = yield* SqlClient.SqlClient
  const names = [...new Set(mentions.map((mention) => normalize(mention.name)).filter((name) => name !== ""))]
  const firsts = [...new Set(names.map(firstToken))]
  const rows = names.length === 0 ?
    [] :
    yield* sql<{ id: string; canonicalName: string; entityType: string | null; alias: string }>`
    SELECT e.id, e.canonical_name, e.entity_type, a2.alias
    FROM entity_aliases a
    JOIN entities e ON e.id = a.entity_id
    JOIN entity_aliases a2 ON a2.entity_id = e.id
    WHERE a.bank_id = ${bankId} AND (a.alias IN ${sql.in(names)} OR split_part(a.alias, ' ', 1) IN ${sql.in(firsts)})`
  const known = new Map<string, KnownEntity>()
  for (const row of rows) {
    const entity = known.get(row.id) ?? {
      id: row.id,
      canonicalName: row.canonicalName,
      type: row.entityType,
      aliases: new Set<string>(),
      isNew: false,
      renamed: false
    }
    entity.aliases.add(row.alias)
    known.set(row.id, entity)
  }
  const newAliases: Array<{ entityId: string; alias: string }> = []

  const matching = (predicate: (alias: string) => boolean) =>
    [...known.values()].filter((entity) => [...entity.aliases].some(predicate))

  const resolveOne = (mention: ExtractedEntity): string => {
    const alias = normalize(mention.name)
    const tokens = alias.split(" ")
    let candidates = matching((known) => known === alias)
    if (candidates.length === 0 && tokens.length === 1) {
      candidates = matching((known) => known.includes(" ") && firstToken(known) === alias)
    }
    if (candidates.length === 0 && tokens.length > 1) {
      candidates = matching((known) => known === tokens[0])
        .filter((entity) => ![...entity.aliases].some((known) => known.includes(" ") && known !== alias))
    }
    if (candidates.length === 1) {
      const entity = candidates[0]!
      if (!entity.aliases.has(alias)) {
        entity.aliases.add(alias)
        newAliases.push({ entityId: entity.id, alias })
        if (mention.name.length > entity.canonicalName.length && tokens.length > 1) {
          entity.canonicalName = mention.name
          entity.renamed = true
        }
      }
      if (entity.type === null && mention.type !== null) entity.type = mention.type
      return entity.id
    }
    const entity: KnownEntity = {
      id: crypto.randomUUID(),
      canonicalName: mention.name,
      type: mention.type,
      aliases: new Set([alias]),
      isNew: true,
      renamed: false
    }
    known.set(entity.id, entity)
    newAliases.push({ entityId: entity.id, alias })
    return entity.id
  }

  const resolved = new Map<string, string>()
  for (const mention of mentions) {
    const alias = normalize(mention.name)
    if (alias === "" || resolved.has(alias)) continue
    resolved.set(alias, resolveOne(mention))
  }

  const created: ReadonlyArray<Record<string, unknown>> = [...known.values()].filter((entity) => entity.isNew).map((
    entity
  ) => ({
    id: entity.id,
    bankId,
    canonicalName: entity.canonicalName,
    entityType: entity.type
  }))
  if (Arr.isReadonlyArrayNonEmpty(created)) yield* sql`INSERT INTO entities ${sql.insert(created)}`
  for (const entity of known.values()) {
    if (!entity.isNew && entity.renamed) {
      yield* sql`UPDATE entities SET canonical_name = ${entity.canonicalName}, entity_type = coalesce(entity_type, ${entity.type})
        WHERE id = ${entity.id}`
    }
  }
  const aliasRows: ReadonlyArray<Record<string, unknown>> = newAliases.map((row) => ({ ...row, bankId }))
  if (Arr.isReadonlyArrayNonEmpty(aliasRows)) {
    yield* sql`INSERT INTO entity_aliases ${sql.insert(aliasRows)} ON CONFLICT DO NOTHING`
  }
  /** Entity id for a mention's name. */
  return (name: string): string | undefined => resolved.get(normalize(name))
})

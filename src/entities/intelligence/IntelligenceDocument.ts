/**
 * The entity intelligence document: a versioned list of sections of paragraphs and bullet lists (what the model
 * answers and what clients can render themselves), its markdown rendering, and the report built from the entity
 * map alone when no language model is configured. The offline report states only what the map holds.
 */
import { Schema } from "effect"
import { type Category, categoryTitles, type Circle, circleTitles } from "./EntityCategories.ts"
import type { EntityContext, MapEntity } from "./EntityMap.ts"

export const Block = Schema.Union([
  Schema.Struct({ type: Schema.Literal("paragraph"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("bullet_list"), items: Schema.Array(Schema.String) })
])
export type Block = typeof Block.Type

export const Section = Schema.Struct({
  id: Schema.String,
  heading: Schema.String,
  level: Schema.optionalKey(Schema.Int),
  blocks: Schema.Array(Block)
})
export type Section = typeof Section.Type

export const StructuredDocument = Schema.Struct({
  version: Schema.optionalKey(Schema.Int),
  sections: Schema.Array(Section)
})
export type StructuredDocument = typeof StructuredDocument.Type

export const renderMarkdown = (document: StructuredDocument): string =>
  document.sections.map((section) => {
    const heading = `${"#".repeat(Math.min(6, Math.max(1, section.level ?? 2)))} ${section.heading}`
    const blocks = section.blocks.map((block) =>
      block.type === "paragraph" ? block.text : block.items.map((item) => `- ${item}`).join("\n")
    )
    return [heading, ...blocks].join("\n\n")
  }).join("\n\n") + "\n"

const peopleCircles: ReadonlyArray<Circle> = [
  "self",
  "inner_people",
  "active_people",
  "peripheral_people",
  "named_others"
]
const worldCircles: ReadonlyArray<Circle> = [
  "institutions_platforms",
  "projects_products",
  "operating_tools",
  "life_context",
  "artifacts_surfaces",
  "mind_themes"
]

const mentions = (entity: MapEntity) => `${entity.name} (${entity.mentions} mention${entity.mentions === 1 ? "" : "s"})`

const circleItems = (context: EntityContext, circles: ReadonlyArray<Circle>) =>
  circles.flatMap((circle) => {
    const members = context.entities.filter((entity) => entity.circle === circle).slice(0, 10)
    return members.length === 0 ? [] : [`${circleTitles[circle]}: ${members.map(mentions).join(", ")}`]
  })

const section = (id: string, heading: string, blocks: ReadonlyArray<Block>): Section => ({
  id,
  heading,
  level: 2,
  blocks
})

/** The report from the map alone: every sentence is a count, a name, a state or a fact the bank holds. */
export const offlineDocument = (context: EntityContext): StructuredDocument => {
  const top = context.entities.slice(0, 5)
  const counts = Object.entries(context.digital_person_map.category_counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([category, count]) => `${count} ${categoryTitles[category as Category]}`)
  const people = circleItems(context, peopleCircles)
  const world = circleItems(context, worldCircles)
  const relationships = context.digital_person_map.strong_relationships.slice(0, 12).map((r) =>
    `${r.a} and ${r.b}: named together in ${r.count} fact${r.count === 1 ? "" : "s"}${
      r.last === null ? "" : `, last on ${r.last}`
    }`
  )
  const withState = context.entities.filter((entity) => entity.state !== undefined).slice(0, 15)
  const states = withState.map((entity) =>
    `${entity.name}: ${entity.state}${
      entity.forecast === undefined ? "" : ` (next: ${entity.forecast.replaceAll(",", ", ")})`
    }` +
    `${entity.anomaly_score === undefined ? "" : `; unusualness ${entity.anomaly_score}`}`
  )
  const recent = context.entities.filter((entity) => entity.recent !== undefined).slice(0, 8)
    .map((entity) => `${entity.name}: ${entity.recent![0]}`)
  const ambiguous = context.entities
    .filter((entity) => entity.category === "human_or_named_thing" || entity.category === "concept_theme")
    .slice(0, 12).map((entity) => entity.name)
  const sections: Array<Section> = [
    section("digital-person", "Snapshot", [{
      type: "paragraph",
      text: context.entities.length === 0
        ? "This bank holds no entities yet."
        : `This bank knows ${context.source_entity_count} entit${context.source_entity_count === 1 ? "y" : "ies"}` +
          `${
            context.omitted_entity_count > 0
              ? ` (the ${context.included_entity_count} most mentioned are mapped here)`
              : ""
          }: ` +
          `${counts.join(", ")}. The most mentioned are ${top.map(mentions).join(", ")}.`
    }]),
    section(
      "people-circles",
      "People",
      people.length === 0
        ? [{ type: "paragraph", text: "No people are named in this bank yet." }]
        : [{ type: "bullet_list", items: people }]
    ),
    section(
      "operating-system",
      "Organisations, projects, tools and places",
      world.length === 0
        ? [{ type: "paragraph", text: "No organisations, projects, tools or places are named yet." }]
        : [{ type: "bullet_list", items: world }]
    ),
    section(
      "relationship-graph",
      "Connections",
      relationships.length === 0
        ? [{ type: "paragraph", text: "No two entities are named in the same fact yet." }]
        : [{ type: "bullet_list", items: relationships }]
    ),
    section(
      "current-states",
      "Current states",
      states.length === 0
        ? [{
          type: "paragraph",
          text: "No entity has a trajectory yet; turn on enable_entity_trajectories or POST …/trajectory/recompute."
        }]
        : [{ type: "bullet_list", items: states }]
    )
  ]
  if (context.open_anomalies.length > 0) {
    sections.push(section("open-anomalies", "Open anomalies", [{
      type: "bullet_list",
      items: context.open_anomalies.slice(0, 10).map((anomaly) =>
        `${anomaly.type} (severity ${anomaly.severity})${
          anomaly.entities.length === 0 ? "" : ` about ${anomaly.entities.join(", ")}`
        }: ` +
        anomaly.description
      )
    }]))
  }
  if (recent.length > 0) {
    sections.push(section("what-to-watch-next", "Latest about each", [{ type: "bullet_list", items: recent }]))
  }
  if (ambiguous.length > 0) {
    sections.push(section("unknowns", "Unknowns to resolve", [{
      type: "paragraph",
      text: `The kind of these entities is not known from their names or stored types: ${ambiguous.join(", ")}.`
    }]))
  }
  return { version: 1, sections }
}

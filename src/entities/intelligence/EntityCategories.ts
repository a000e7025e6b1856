/**
 * What kind of thing an entity is and which circle of the bank's world it belongs to: the stored entity type
 * when retain recorded one, else heuristics over the name. Pure; the categories and circles are the vocabulary
 * of the entity intelligence map.
 */

export type Category =
  | "self_anchor"
  | "human_name"
  | "human_or_named_thing"
  | "organization"
  | "tool_technology"
  | "project_product"
  | "place"
  | "event_goal"
  | "digital_artifact"
  | "concept_theme"

export type Circle =
  | "self"
  | "inner_people"
  | "active_people"
  | "peripheral_people"
  | "named_others"
  | "operating_tools"
  | "institutions_platforms"
  | "projects_products"
  | "life_context"
  | "artifacts_surfaces"
  | "mind_themes"

const typeCategories: ReadonlyArray<[ReadonlyArray<string>, Category]> = [
  [["person", "human", "people"], "human_name"],
  [["org", "organization", "organisation", "company", "company_name"], "organization"],
  [["tool", "technology", "software", "hardware", "model"], "tool_technology"],
  [["project", "product", "codebase"], "project_product"],
  [["location", "place", "city", "country", "gpe", "loc"], "place"],
  [["event"], "event_goal"],
  [["artifact"], "digital_artifact"],
  [["concept"], "concept_theme"]
]

const selfTerms = new Set(["i", "me", "myself", "self", "user"])
const orgTerms = new Set([
  "ai",
  "app",
  "bank",
  "company",
  "corp",
  "corporation",
  "github",
  "google",
  "inc",
  "labs",
  "llc",
  "ltd",
  "microsoft",
  "nvidia",
  "openai",
  "organization",
  "platform",
  "studio",
  "team",
  "university",
  "school",
  "hospital"
])
const toolTerms = new Set([
  "api",
  "browser",
  "cli",
  "db",
  "docker",
  "embedding",
  "engine",
  "gpu",
  "json",
  "llm",
  "model",
  "postgres",
  "python",
  "react",
  "server",
  "sql",
  "token",
  "tool",
  "typescript",
  "ui",
  "worker",
  "app"
])
const projectTerms = new Set(["agent", "feature", "pipeline", "project", "product", "prototype", "release"])
const goalTerms = new Set([
  "conference",
  "decision",
  "festival",
  "goal",
  "marriage",
  "meeting",
  "migration",
  "party",
  "plan",
  "release",
  "task",
  "trip",
  "wedding",
  "workshop"
])
const honorifics = new Set(["mr", "mrs", "ms", "dr", "prof"])

const tokensOf = (name: string) => name.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((token) => token !== "")

export const categorize = (name: string, entityType: string | null): Category => {
  const type = entityType?.toLowerCase().trim() ?? ""
  for (const [types, category] of typeCategories) if (types.includes(type)) return category
  const tokens = tokensOf(name)
  const lower = name.toLowerCase()
  if (tokens.length === 1 && selfTerms.has(tokens[0]!)) return "self_anchor"
  if (/https?:\/\/|@|\.(com|net|org)\b/.test(lower)) return "digital_artifact"
  if (/\.(py|ts|tsx|js|json|md|ya?ml)$/.test(lower)) return "digital_artifact"
  if (tokens.some((token) => toolTerms.has(token)) || /[/\\_]/.test(name)) return "tool_technology"
  if (tokens.some((token) => orgTerms.has(token))) return "organization"
  if (tokens.some((token) => projectTerms.has(token))) return "project_product"
  if (tokens.some((token) => goalTerms.has(token))) return "event_goal"
  const words = name.trim().split(/\s+/)
  const titled = words.every((word) => /^\p{Lu}[\p{Ll}'’-]+$/u.test(word))
  if ((words.length >= 2 && words.length <= 4 && titled) || honorifics.has(tokens[0] ?? "")) return "human_name"
  if (words.length === 1 && /^\p{Lu}/u.test(name.trim())) return "human_or_named_thing"
  return "concept_theme"
}

export const circleOf = (category: Category, mentions: number): Circle => {
  switch (category) {
    case "self_anchor":
      return "self"
    case "human_name":
      return mentions >= 12 ? "inner_people" : mentions >= 4 ? "active_people" : "peripheral_people"
    // A bare capitalised name may be a person or a company; calling it a person would mislead the reader.
    case "human_or_named_thing":
      return "named_others"
    case "tool_technology":
      return "operating_tools"
    case "organization":
      return "institutions_platforms"
    case "project_product":
      return "projects_products"
    case "event_goal":
    case "place":
      return "life_context"
    case "digital_artifact":
      return "artifacts_surfaces"
    case "concept_theme":
      return "mind_themes"
  }
}

export const circleTitles: Record<Circle, string> = {
  self: "Self",
  inner_people: "Inner circle",
  active_people: "Active people",
  peripheral_people: "Peripheral people",
  named_others: "Other names (person or thing not known)",
  operating_tools: "Tools and technology",
  institutions_platforms: "Organisations and platforms",
  projects_products: "Projects and products",
  life_context: "Places and events",
  artifacts_surfaces: "Artifacts and surfaces",
  mind_themes: "Themes"
}

export const categoryTitles: Record<Category, string> = {
  self_anchor: "self",
  human_name: "people",
  human_or_named_thing: "other names",
  organization: "organisations",
  tool_technology: "tools",
  project_product: "projects",
  place: "places",
  event_goal: "events",
  digital_artifact: "artifacts",
  concept_theme: "themes"
}

/**
 * The optional families of MCP tools beyond the spec's fixed table of 29 (26 per bank): SERVICE_API_MCP_TOOL_FAMILIES
 * names the ones to offer (`all`, or a comma-separated list). Off by default, so a client sees exactly the spec's
 * tools; an assistant given every family sees about seventy, more than some clients handle well.
 */
export const mcpToolFamilies = [
  "dreams",
  "repos",
  "datasets",
  "graph",
  "anomalies",
  "entities",
  "brain",
  "forgetting"
] as const
export type McpToolFamily = typeof mcpToolFamilies[number]

const isFamily = (name: string): name is McpToolFamily => (mcpToolFamilies as ReadonlyArray<string>).includes(name)

/** The families a SERVICE_API_MCP_TOOL_FAMILIES value names, or what is wrong with it. */
export const parseToolFamilies = (value: string): ReadonlyArray<McpToolFamily> | string => {
  const names = value.split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "")
  if (names.includes("all")) return mcpToolFamilies
  const unknown = names.filter((name) => !isFamily(name))
  if (unknown.length > 0) {
    return `SERVICE_API_MCP_TOOL_FAMILIES: unknown tool famil${unknown.length === 1 ? "y" : "ies"} ` +
      `${unknown.join(", ")}; use all or a comma-separated list of ${mcpToolFamilies.join(", ")}`
  }
  return mcpToolFamilies.filter((family) => names.includes(family))
}

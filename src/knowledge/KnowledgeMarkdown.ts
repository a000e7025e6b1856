/**
 * Knowledge pages as markdown: a page's document (YAML frontmatter and body), the export bundle's nested
 * `index.md` and its per-page history logs, and search snippets. Pure text; YAML scalars are written as JSON
 * strings (valid YAML), so no name, tag or query can break the frontmatter.
 */
import type { Nested } from "./KnowledgeTree.ts"

export const defaultPageType = "knowledge-page"

/** A page's type: its first `type:<x>` tag, else `knowledge-page`. */
export const pageType = (tags: ReadonlyArray<string>): string => {
  const tagged = tags.find((tag) => tag.startsWith("type:") && tag.length > "type:".length)
  return tagged === undefined ? defaultPageType : tagged.slice("type:".length)
}

export interface PageDocument {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly tags: ReadonlyArray<string>
  readonly timestamp: string | null
  readonly body: string | null
}

const yaml = (value: string | null) => (value === null ? "null" : JSON.stringify(value))

export const pageMarkdown = (page: PageDocument): string => {
  const frontmatter = [
    "---",
    `id: ${yaml(page.id)}`,
    `name: ${yaml(page.name)}`,
    `type: ${yaml(pageType(page.tags))}`,
    `description: ${yaml(page.description)}`,
    `tags: ${JSON.stringify(page.tags)}`,
    `timestamp: ${yaml(page.timestamp)}`,
    "---"
  ].join("\n")
  return `${frontmatter}\n\n${page.body ?? ""}`.trimEnd() + "\n"
}

export interface IndexEntry {
  readonly id: string
  readonly kind: "folder" | "page"
  readonly name: string
}

/** Markdown link text: brackets would end the link early. */
const linkText = (name: string) => name.replace(/([\\[\]])/g, "\\$1")

/** The nested outline of the whole tree: folders as items, pages as links to their `<id>.md`. */
export const indexMarkdown = (forest: ReadonlyArray<Nested<IndexEntry>>): string => {
  const lines = ["# Knowledge base", ""]
  const walk = (nodes: ReadonlyArray<Nested<IndexEntry>>, depth: number) => {
    for (const node of nodes) {
      const indent = "  ".repeat(depth)
      lines.push(
        node.entry.kind === "folder"
          ? `${indent}- ${linkText(node.entry.name)}/`
          : `${indent}- [${linkText(node.entry.name)}](${pagePath(node.entry.id)})`
      )
      walk(node.children, depth + 1)
    }
  }
  walk(forest, 0)
  if (forest.length === 0) lines.push("_No pages yet._")
  return lines.join("\n") + "\n"
}

export const pagePath = (pageId: string) => `${pageId}.md`
export const logPath = (pageId: string) => `log/${pageId}.md`

export interface LogEntry {
  readonly at: string
  readonly reason: string
  readonly mode: string
  readonly changed: boolean
  readonly sourceQuery: string
}

/** A page's build history, oldest first: when, why, how, and whether the body changed. */
export const logMarkdown = (name: string, entries: ReadonlyArray<LogEntry>): string => {
  const lines = [`# History of ${name}`, ""]
  for (const entry of entries) {
    lines.push(
      `- ${entry.at} — ${entry.reason} refresh (${entry.mode}): ${entry.changed ? "body changed" : "no change"}; ` +
        `source query ${JSON.stringify(entry.sourceQuery)}`
    )
  }
  if (entries.length === 0) lines.push("_Not built yet._")
  return lines.join("\n") + "\n"
}

const snippetLength = 240

/**
 * Up to 240 characters of the page around the first query word found in its body (else its description), on word
 * boundaries, with an ellipsis where text was cut.
 */
export const snippetOf = (body: string, description: string, words: ReadonlyArray<string>): string => {
  const text = (body.trim() === "" ? description : body).replace(/\s+/g, " ").trim()
  if (text.length <= snippetLength) return text
  const lower = text.toLowerCase()
  const hit = words.map((word) => lower.indexOf(word.toLowerCase())).filter((at) => at >= 0).sort((a, b) => a - b)[0] ??
    0
  let start = Math.max(0, hit - snippetLength / 3)
  if (start > 0) start = text.indexOf(" ", start) + 1 || start
  let end = Math.min(text.length, start + snippetLength)
  if (end < text.length) end = text.lastIndexOf(" ", end) > start ? text.lastIndexOf(" ", end) : end
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`
}

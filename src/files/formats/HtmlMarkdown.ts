/**
 * HTML to markdown with turndown: ATX headings, `-` bullets, fenced code, GFM pipe tables, and nothing that is
 * not content (scripts, styles, forms, embedded `data:` images). Synchronous (turndown parses with domino), about
 * 1 ms per KB of HTML, which is why it runs on a document worker rather than the server's thread.
 */
import TurndownService from "turndown"

/** The part of a DOM node the table rules read; turndown's types name the browser's `HTMLElement`. */
interface DomNode {
  readonly nodeName: string
  readonly parentNode: DomNode | null
  readonly previousSibling: DomNode | null
  readonly childNodes: ArrayLike<DomNode>
  readonly getAttribute?: (name: string) => string | null
}

const asNode = (node: unknown) => node as DomNode

const hasNextSibling = (node: unknown) => (node as { nextSibling: unknown }).nextSibling !== null

const elementSiblingsBefore = (node: DomNode) => {
  let count = 0
  for (let sibling = node.previousSibling; sibling !== null; sibling = sibling.previousSibling) {
    if (sibling.nodeName === "TH" || sibling.nodeName === "TD") count++
  }
  return count
}

/** The first `<tr>` of its table, whether it sits in a `<thead>`, a `<tbody>` or directly in the table. */
const isFirstRow = (row: DomNode) => {
  const section = row.parentNode
  if (section === null) return false
  for (let sibling = row.previousSibling; sibling !== null; sibling = sibling.previousSibling) {
    if (sibling.nodeName === "TR") return false
  }
  if (section.nodeName === "TABLE") return true
  for (let sibling = section.previousSibling; sibling !== null; sibling = sibling.previousSibling) {
    if (sibling.nodeName === "THEAD" || sibling.nodeName === "TBODY" || sibling.nodeName === "TR") return false
  }
  return true
}

const cellCount = (row: DomNode) =>
  Array.from(row.childNodes).filter((child) => child.nodeName === "TH" || child.nodeName === "TD").length

const safeHref = (href: string | null | undefined) =>
  href !== null && href !== undefined && /^(https?:|mailto:|#|\/)/i.test(href.trim())

const service = (() => {
  const turndown = new TurndownService({
    headingStyle: "atx",
    hr: "---",
    bulletListMarker: "-",
    codeBlockStyle: "fenced",
    emDelimiter: "*",
    strongDelimiter: "**"
  })
  turndown.remove(
    [
      "script",
      "style",
      "noscript",
      "template",
      "head",
      "iframe",
      "object",
      "embed",
      "svg",
      "canvas",
      "form",
      "button",
      "select",
      "title"
    ] as Array<TurndownService.TagName>
  )
  // turndown pads list markers to four columns; one space reads better and nests the same way in CommonMark.
  turndown.addRule("listItem", {
    filter: "li",
    replacement: (content, node) => {
      const item = asNode(node)
      const parent = item.parentNode
      let prefix = "- "
      if (parent?.nodeName === "OL") {
        const start = Number(parent.getAttribute?.("start") ?? "1")
        const index = Array.from(parent.childNodes).filter((child) => child.nodeName === "LI").indexOf(item)
        prefix = `${(Number.isFinite(start) ? start : 1) + index}. `
      }
      const isParagraph = /\n$/.test(content)
      const body = content.replace(/^\n+|\n+$/g, "") + (isParagraph ? "\n" : "")
      return prefix + body.replace(/\n/g, `\n${" ".repeat(prefix.length)}`) + (hasNextSibling(item) ? "\n" : "")
    }
  })
  turndown.addRule("tableCell", {
    filter: ["th", "td"],
    replacement: (content, node) => {
      const cell = content.trim().replace(/\n+/g, " ").replace(/\|/g, "\\|")
      return `${elementSiblingsBefore(asNode(node)) === 0 ? "| " : " "}${cell} |`
    }
  })
  turndown.addRule("tableRow", {
    filter: "tr",
    replacement: (content, node) => {
      const row = asNode(node)
      const separator = isFirstRow(row) ? `\n|${" --- |".repeat(Math.max(1, cellCount(row)))}` : ""
      return `\n${content}${separator}`
    }
  })
  turndown.addRule("tableSection", { filter: ["thead", "tbody", "tfoot"], replacement: (content) => content })
  turndown.addRule("table", {
    filter: "table",
    replacement: (content) => `\n\n${content.replace(/\n+/g, "\n").trim()}\n\n`
  })
  turndown.addRule("image", {
    filter: "img",
    // Embedded `data:` images (mammoth inlines every picture) would put megabytes of base64 into a memory.
    replacement: (_content, node) => {
      const element = asNode(node)
      const alt = (element.getAttribute?.("alt") ?? "").trim()
      const src = (element.getAttribute?.("src") ?? "").trim()
      if (/^https?:/i.test(src)) return `![${alt}](${src})`
      return alt === "" ? "" : `[image: ${alt}]`
    }
  })
  turndown.addRule("unsafeLink", {
    filter: (node) => node.nodeName === "A" && !safeHref(asNode(node).getAttribute?.("href")),
    replacement: (content) => content
  })
  return turndown
})()

/** Markdown for an HTML document or fragment; blank-line runs collapsed, trimmed. */
export const htmlToMarkdown = (html: string): string =>
  service.turndown(html).replace(/^[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim()

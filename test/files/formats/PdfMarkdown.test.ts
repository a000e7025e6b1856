/** The PDF layout rules on positioned text items: headings by size, lists, hyphenation, page breaks, page numbers. */
import { assert, describe, it } from "@effect/vitest"
import type { StructuredTextItem } from "unpdf"
import { layoutPdf } from "../../../src/files/formats/PdfMarkdown.ts"

const item = (str: string, y: number, fontSize = 10, x = 50): StructuredTextItem => ({
  str,
  x,
  y,
  width: str.length * fontSize * 0.5,
  height: fontSize,
  fontSize,
  fontFamily: "",
  dir: "ltr",
  hasEOL: false
})

describe("layoutPdf", () => {
  it("ranks heading sizes, groups lines into paragraphs and lists, rejoins hyphenated words", () => {
    const page = [
      item("Annual Report", 800, 24),
      item("Finances", 760, 16),
      item("Revenue grew in every quarter thanks to a strong", 740),
      item("export busi-", 728),
      item("ness and careful spending.", 716),
      item("• Hired nine engineers", 690),
      item("• Opened the Porto office", 678),
      item("2) Closed the old depot", 666),
      item("# not a heading", 640)
    ]
    assert.strictEqual(
      layoutPdf([page]),
      "# Annual Report\n\n## Finances\n\n" +
        "Revenue grew in every quarter thanks to a strong export business and careful spending.\n\n" +
        "- Hired nine engineers\n- Opened the Porto office\n2. Closed the old depot\n\n\\# not a heading"
    )
  })

  it("joins a sentence cut by a page break and drops lone page numbers", () => {
    const first = [item("The survey covered the northern", 700), item("coast and the", 688), item("1", 40)]
    const second = [
      item("Page 2 of 2", 800),
      item("islands beyond it.", 700),
      item("A new paragraph starts here.", 660)
    ]
    assert.strictEqual(
      layoutPdf([first, second]),
      "The survey covered the northern coast and the islands beyond it.\n\nA new paragraph starts here."
    )
  })

  it("puts items of one baseline on one line, with a space only where there is a gap", () => {
    const line = [
      { ...item("Total:", 700), width: 30 },
      { ...item("42", 700, 10, 85), width: 10 },
      { ...item("%", 700, 10, 95), width: 5 }
    ]
    assert.strictEqual(layoutPdf([line]), "Total: 42%")
  })
})

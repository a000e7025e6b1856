/** HTML to markdown: pipe tables, nested and numbered lists, and nothing that is not content. */
import { assert, describe, it } from "@effect/vitest"
import { htmlToMarkdown } from "../../../src/files/formats/HtmlMarkdown.ts"

describe("htmlToMarkdown", () => {
  it("writes tables as GFM pipe tables, the first row as the header, pipes escaped", () => {
    const html = "<table><thead><tr><th>Name</th><th>Role</th></tr></thead><tbody>" +
      "<tr><td><p>Ada</p><p>Lovelace</p></td><td>a|b</td></tr><tr><td>Alan</td><td>Turing</td></tr></tbody></table>"
    assert.strictEqual(
      htmlToMarkdown(html),
      "| Name | Role |\n| --- | --- |\n| Ada Lovelace | a\\|b |\n| Alan | Turing |"
    )
  })

  it("numbers ordered lists from their start and nests lists under their item", () => {
    const html = "<ol start=\"3\"><li>three<ul><li>detail</li></ul></li><li>four</li></ol>"
    assert.strictEqual(htmlToMarkdown(html), "3. three\n   - detail\n4. four")
  })

  it("drops scripts, styles, forms, embedded images and script links, keeps alt text and web links", () => {
    const html = "<style>p{}</style><script>track()</script><form><input value=x><button>Go</button></form>" +
      "<p><img src=\"data:image/png;base64,AAAA\" alt=\"org chart\"> <a href=\"javascript:steal()\">click</a> " +
      "<a href=\"https://example.org/a\">docs</a> <img src=\"https://example.org/i.png\" alt=\"logo\"></p>"
    assert.strictEqual(
      htmlToMarkdown(html),
      "[image: org chart] click [docs](https://example.org/a) ![logo](https://example.org/i.png)"
    )
  })
})

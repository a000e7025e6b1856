/**
 * FileConverter over real documents built in the test (PDF, DOCX, PPTX, XLSX, ODT, HTML, markdown) and a committed
 * PNG for OCR: the markdown keeps the known text and headings, chains fall back in order, requested parsers are
 * checked, binary input to `text` and oversize files are refused with typed errors.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { OfficeConverter } from "officeparser"
import { PDFDocument } from "pdf-lib"
import { FileConverter } from "../../src/files/FileConverter.ts"
import * as Docs from "../fixtures/files/documents.ts"
import { officeBomb } from "../support/ArchiveBombs.ts"

const converterLayer = FileConverter.layer().pipe(Layer.provide(FetchHttpClient.layer))

const encode = (text: string) => new TextEncoder().encode(text)

const build = <A>(make: () => Promise<A>) => Effect.promise(make)

/** OCR may misread a letter; the image's words must nearly all come back. */
const assertOcrWords = (markdown: string) => {
  const found = Docs.ocrWords.filter((word) => markdown.toLowerCase().includes(word.toLowerCase()))
  assert.isAtLeast(found.length, Docs.ocrWords.length - 1, `OCR read: ${JSON.stringify(markdown)}`)
}

layer(converterLayer, { excludeTestServices: true })("FileConverter", (it) => {
  describe("native", () => {
    it.effect("PDF: both pages' text, title and section as headings, paragraphs split by spacing", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "log.pdf", bytes: yield* build(Docs.pdf) }, ["native"])
        assert.strictEqual(result.parser, "native")
        assert.strictEqual(result.detectedType, "pdf")
        assert.strictEqual(result.pages, 2)
        assert.strictEqual(
          result.markdown,
          [
            "# Lighthouse Maintenance Log",
            "The keeper inspected the lamp on the first morning. Fresh oil was ordered from the mainland supplier.",
            "A second paragraph follows after a wider gap.",
            "## Storm Damage",
            "Waves cracked the northern window during the gale."
          ].join("\n\n")
        )
      }))

    it.effect("DOCX: headings as #, bold, a bullet list and the table as a pipe table", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "brief.docx", bytes: yield* build(Docs.docx) }, ["native"])
        assert.strictEqual(result.detectedType, "docx")
        assert.include(result.markdown, "# Project Falcon Briefing\n")
        assert.include(result.markdown, "The launch window opens on **the ninth of March**.")
        assert.include(result.markdown, "## Open questions\n")
        assert.include(result.markdown, "- Fuel supplier contract\n- Weather contingency plan")
        assert.include(result.markdown, "| Stage | Owner |\n| --- | --- |\n| Ignition | Priya |")
      }))

    it.effect("PPTX: a section per slide with its text and speaker notes (not the slide-number placeholder)", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "deck.pptx", bytes: yield* build(Docs.pptx) }, ["native"])
        assert.strictEqual(result.detectedType, "pptx")
        assert.strictEqual(result.pages, 2)
        assert.strictEqual(
          result.markdown,
          "## Slide 1\n\nRoadmap Review\n\nShip the offline search feature in April.\n\n" +
            "## Slide 2\n\nRisks\n\nHiring delays could push the beta to June.\n\n> **Note:** Ask Dana about the contractor budget."
        )
      }))

    it.effect("XLSX: a heading and a pipe table per sheet", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "stock.xlsx", bytes: yield* build(Docs.xlsx) }, ["native"])
        assert.strictEqual(result.detectedType, "xlsx")
        assert.include(
          result.markdown,
          "## Inventory\n\n| Item | Quantity | Warehouse |\n| --- | --- | --- |\n| Copper wire | 120 | Rotterdam |\n| Solar panel | 42 | Lisbon |"
        )
        assert.include(result.markdown, "## Notes\n\n| Audited by Tomasz |")
      }))

    it.effect("ODT: headings without anchors, no front matter", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const docx = yield* build(Docs.docx)
        const odt = yield* build(() => OfficeConverter.convert(Buffer.from(docx), "odt"))
        const result = yield* converter.convert({ filename: "brief.odt", bytes: odt.value as Uint8Array }, ["native"])
        assert.strictEqual(result.detectedType, "odt")
        assert.isTrue(result.markdown.startsWith("# Project Falcon Briefing\n\nThe launch window"), result.markdown)
        assert.include(result.markdown, "## Open questions\n\n- Fuel supplier contract")
        assert.notInclude(result.markdown, "{#")
      }))

    it.effect("RTF, EPUB and another producer's PDF of the same brief keep its headings and list", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const docx = Buffer.from(yield* build(Docs.docx))
        for (const format of ["rtf", "epub", "pdf"] as const) {
          const generated = yield* build(() =>
            OfficeConverter.convert(docx, format, { generatorConfig: { pdfConfig: { engine: "native" } } })
          )
          const bytes = typeof generated.value === "string" ? encode(generated.value) : generated.value as Uint8Array
          const result = yield* converter.convert({ filename: `brief.${format}`, bytes }, ["native"])
          assert.strictEqual(result.detectedType, format)
          assert.include(result.markdown, "# Project Falcon Briefing\n", format)
          assert.include(
            result.markdown,
            "## Open questions\n\n- Fuel supplier contract\n- Weather contingency plan",
            format
          )
        }
      }))

    it.effect("HTML: heading, link and list kept; script, style and title dropped", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "minutes.html", bytes: encode(Docs.html) }, ["native"])
        assert.strictEqual(result.detectedType, "html")
        assert.strictEqual(
          result.markdown,
          "# Garden Club Minutes\n\nWe agreed to plant **tomatoes** along the south fence. See the " +
            "[planting plan](https://example.org/plan).\n\n- Buy compost\n- Fix the gate"
        )
      }))

    it.effect("markdown, CSV and JSON come through as they are", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const markdown = yield* converter.convert({ filename: "reading.md", bytes: encode(Docs.markdown) }, ["native"])
        assert.strictEqual(markdown.markdown, Docs.markdown.trim())
        assert.strictEqual(markdown.detectedType, "markdown")
        const csv = yield* converter.convert({ filename: "rates.csv", bytes: encode("city,rate\r\nOslo,3\r\n") }, [
          "native"
        ])
        assert.deepStrictEqual([csv.detectedType, csv.markdown], ["csv", "city,rate\nOslo,3"])
        const json = yield* converter.convert({
          filename: "x",
          contentType: "application/json",
          bytes: encode("{\"a\":1}")
        }, ["native"])
        assert.deepStrictEqual([json.detectedType, json.markdown], ["json", "{\"a\":1}"])
      }))

    it.effect("a PDF without a text layer fails and says why", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const blank = yield* build(async () => {
          const document = await PDFDocument.create()
          document.addPage()
          return document.save()
        })
        const error = yield* Effect.flip(converter.convert({ filename: "scan.pdf", bytes: blank }, ["native"]))
        assert.strictEqual(error._tag, "ConversionError")
        if (error._tag !== "ConversionError") return
        assert.strictEqual(error.attempts[0]?.outcome, "failed")
        assert.include(error.message, "no text layer")
      }))

    it.effect("a damaged DOCX fails as unreadable rather than crashing, refused by the zip checks before any parser", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const docx = yield* build(Docs.docx)
        const error = yield* Effect.flip(
          converter.convert({ filename: "cut.docx", bytes: docx.subarray(0, 4000) }, ["native"])
        )
        assert.strictEqual(error._tag, "DocumentRefused")
        assert.include(error.message, "cut.docx (docx) refused before parsing (not_a_zip): not a readable zip archive")
      }))
  })

  it.effect("a DOCX that is a zip bomb is refused before any parser opens it", () =>
    Effect.gen(function*() {
      const converter = yield* FileConverter
      const bomb = officeBomb("docx", [{ name: "word/media/zeros.bin", data: new Uint8Array(16 * 1024 * 1024) }])
      const error = yield* Effect.flip(converter.convert({ filename: "bomb.docx", bytes: bomb }, ["native"]))
      assert.strictEqual(error._tag, "DocumentRefused")
      assert.include(error.message, "bomb.docx (docx) refused before parsing (compression_ratio)")
    }))

  describe("chains", () => {
    it.effect("text refuses a PDF and the chain falls back to native", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "log.pdf", bytes: yield* build(Docs.pdf) }, [
          "text",
          "native"
        ])
        assert.strictEqual(result.parser, "native")
        assert.include(result.markdown, "# Lighthouse Maintenance Log")
      }))

    it.effect("the first parser that succeeds wins: text keeps the HTML as it is", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const result = yield* converter.convert({ filename: "minutes.html", bytes: encode(Docs.html) }, [
          "text",
          "native"
        ])
        assert.strictEqual(result.parser, "text")
        assert.include(result.markdown, "<h1>Garden Club Minutes</h1>")
      }))

    it.effect("when every parser fails the error lists each one's answer, in order", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const error = yield* Effect.flip(
          converter.convert({ filename: "log.pdf", bytes: yield* build(Docs.pdf) }, ["ocr", "text"])
        )
        assert.strictEqual(error._tag, "ConversionError")
        if (error._tag !== "ConversionError") return
        assert.strictEqual(error.detectedType, "pdf")
        assert.deepStrictEqual(error.attempts.map((a) => [a.parser, a.outcome]), [["ocr", "unsupported"], [
          "text",
          "unsupported"
        ]])
        assert.strictEqual(
          error.message,
          "could not convert log.pdf (pdf): ocr: does not read pdf; text: does not read pdf"
        )
      }))

    it.effect("text on binary content fails clearly, even when the name says .txt", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const bytes = new Uint8Array([0x68, 0x69, 0x00, 0x01, 0xff, 0xfe, 0x00, 0x9c])
        const error = yield* Effect.flip(converter.convert({ filename: "notes.txt", bytes }, ["text"]))
        assert.strictEqual(error._tag, "ConversionError")
        if (error._tag !== "ConversionError") return
        assert.deepStrictEqual(error.attempts.map((a) => [a.parser, a.outcome, a.message]), [
          ["text", "failed", "the content is binary, not UTF-8 text"]
        ])
        const unnamed = yield* Effect.flip(converter.convert({ filename: "blob", bytes }, ["text", "native"]))
        assert.strictEqual(
          unnamed.message,
          "could not convert blob (binary): text: unrecognised binary content; native: unrecognised binary content"
        )
      }))

    it.effect("an empty file is a failure, not an empty document", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const error = yield* Effect.flip(converter.convert({ filename: "empty.md", bytes: encode(" \n") }, ["native"]))
        assert.include(error.message, "native: found no text")
      }))

    it.effect("audio without a transcribe parser, and TIFF, say why they are not read", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const mp3 = new Uint8Array([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0])
        const error = yield* Effect.flip(converter.convert({ filename: "memo.mp3", bytes: mp3 }, ["native"]))
        assert.strictEqual(
          error.message,
          "could not convert memo.mp3 (mp3): native: does not read mp3 audio (the transcribe parser does)"
        )
        const tiff = yield* Effect.flip(
          converter.convert({ filename: "scan.tif", bytes: new Uint8Array([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0]) }, [
            "native",
            "ocr"
          ])
        )
        assert.strictEqual(
          tiff.message,
          "could not convert scan.tif (tiff): native: TIFF images are not supported; convert to PNG or JPEG; ocr: TIFF images are not supported; convert to PNG or JPEG"
        )
      }))
  })

  describe("resolveChain", () => {
    it.effect("no request means the default chain; names are trimmed, lower-cased and deduplicated", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        assert.deepStrictEqual(converter.enabledParsers, ["native", "ocr", "text"])
        assert.deepStrictEqual(converter.defaultChain, ["native"])
        assert.deepStrictEqual(yield* converter.resolveChain(undefined), ["native"])
        assert.deepStrictEqual(yield* converter.resolveChain(null), ["native"])
        assert.deepStrictEqual(yield* converter.resolveChain([]), ["native"])
        assert.deepStrictEqual(yield* converter.resolveChain("ocr"), ["ocr"])
        assert.deepStrictEqual(yield* converter.resolveChain(" Text , native "), ["text", "native"])
        assert.deepStrictEqual(yield* converter.resolveChain(["ocr", "NATIVE", "ocr"]), ["ocr", "native"])
      }))

    it.effect("an unknown or disabled parser fails naming it and listing the enabled ones", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const unknown = yield* Effect.flip(converter.resolveChain(["native", "pandoc"]))
        assert.strictEqual(unknown._tag, "UnknownParser")
        assert.strictEqual(unknown.parser, "pandoc")
        assert.deepStrictEqual(unknown.enabled, ["native", "ocr", "text"])
        assert.strictEqual(unknown.message, "unknown parser 'pandoc'; enabled parsers: native, ocr, text")
        const disabled = yield* Effect.flip(converter.resolveChain("transcribe"))
        assert.strictEqual(disabled.parser, "transcribe")
        assert.strictEqual(
          disabled.message,
          "parser 'transcribe' is not enabled on this server; enabled parsers: native, ocr, text"
        )
      }))
  })

  describe("ocr", () => {
    it.effect(
      "recovers the printed words of a PNG through native and through ocr, one worker for both",
      () =>
        Effect.gen(function*() {
          const converter = yield* FileConverter
          const image = Docs.ocrImage()
          const [viaNative, viaOcr] = yield* Effect.all([
            converter.convert({ filename: "invoice.png", bytes: image }, ["native"]),
            converter.convert({ filename: "scan", contentType: "image/png", bytes: image }, ["ocr"])
          ], { concurrency: 2 })
          assert.strictEqual(viaNative.detectedType, "png")
          assert.strictEqual(viaOcr.parser, "ocr")
          assertOcrWords(viaNative.markdown)
          assertOcrWords(viaOcr.markdown)
        }),
      60_000
    )

    it.effect("an undecodable image fails that file only; the engine keeps working", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        const broken = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6])
        const error = yield* Effect.flip(converter.convert({ filename: "broken.png", bytes: broken }, ["ocr"]))
        assert.include(error.message, "ocr: OCR could not read the image")
        const next = yield* converter.convert({ filename: "invoice.png", bytes: Docs.ocrImage() }, ["ocr"])
        assertOcrWords(next.markdown)
      }), 60_000)
  })
})

describe("FileConverter limits", () => {
  layer(FileConverter.layer({ maxFileBytes: 1024 }).pipe(Layer.provide(FetchHttpClient.layer)), {
    excludeTestServices: true
  })("max bytes", (it) => {
    it.effect("a file over the per-file limit is refused before any parsing", () =>
      Effect.gen(function*() {
        const converter = yield* FileConverter
        assert.strictEqual(converter.maxFileBytes, 1024)
        const error = yield* Effect.flip(
          converter.convert({ filename: "big.txt", bytes: new Uint8Array(1025).fill(0x61) }, ["text"])
        )
        assert.strictEqual(error._tag, "FileTooLarge")
        if (error._tag !== "FileTooLarge") return
        assert.deepStrictEqual([error.size, error.maxBytes], [1025, 1024])
        assert.strictEqual(error.message, "big.txt is 1025 bytes; the limit is 1024 bytes per file")
        const fits = yield* converter.convert({ filename: "fits.txt", bytes: new Uint8Array(1024).fill(0x61) }, [
          "text"
        ])
        assert.strictEqual(fits.markdown.length, 1024)
      }))
  })
})

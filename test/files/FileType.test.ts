/** Type detection: magic bytes beat the name, the name beats the declared content type, text is sniffed last. */
import { assert, describe, it } from "@effect/vitest"
import { detectFileType } from "../../src/files/FileType.ts"
import * as Docs from "../fixtures/files/documents.ts"

const bytes = (...values: ReadonlyArray<number | string>) =>
  new Uint8Array(
    values.flatMap((value) => typeof value === "string" ? [...value].map((c) => c.charCodeAt(0)) : [value])
  )

describe("detectFileType", () => {
  it("reads magic bytes before the name and the content type", async () => {
    assert.strictEqual(
      detectFileType({ filename: "report.txt", contentType: "text/plain", bytes: await Docs.pdf() }),
      "pdf"
    )
    assert.strictEqual(detectFileType({ filename: "upload", bytes: await Docs.docx() }), "docx")
    assert.strictEqual(detectFileType({ filename: "upload.zip", bytes: await Docs.pptx() }), "pptx")
    assert.strictEqual(detectFileType({ filename: "upload", bytes: await Docs.xlsx() }), "xlsx")
    assert.strictEqual(detectFileType({ filename: "photo.jpg", bytes: Docs.ocrImage() }), "png")
  })

  it("knows images, audio, OpenDocument, RTF and the legacy Office container by their signatures", () => {
    const cases: ReadonlyArray<[Uint8Array, string]> = [
      [bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0), "jpeg"],
      [bytes("GIF89a", 0, 0), "gif"],
      [bytes("RIFF", 0, 0, 0, 0, "WEBPVP8 "), "webp"],
      [bytes("RIFF", 0, 0, 0, 0, "WAVEfmt "), "wav"],
      [bytes("ID3", 4, 0, 0, 0, 0), "mp3"],
      [bytes(0xff, 0xfb, 0x90, 0x64), "mp3"],
      [bytes("fLaC", 0, 0, 0, 34), "flac"],
      [bytes("OggS", 0, 2), "ogg"],
      [bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f), "webm"],
      [bytes(0, 0, 0, 32, "ftypM4A ", 0, 0), "m4a"],
      [bytes(0, 0, 0, 32, "ftypisom", 0, 0), "mp4"],
      [bytes("{\\rtf1\\ansi hello}"), "rtf"],
      [bytes(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0), "legacy-office"],
      [bytes("PK", 3, 4, ...new Array(26).fill(0), "mimetypeapplication/vnd.oasis.opendocument.text"), "odt"],
      [bytes("PK", 3, 4, ...new Array(26).fill(0), "mimetypeapplication/vnd.oasis.opendocument.spreadsheet"), "ods"],
      [bytes("PK", 3, 4, ...new Array(26).fill(0), "mimetypeapplication/vnd.oasis.opendocument.presentation"), "odp"],
      [bytes("PK", 3, 4, ...new Array(26).fill(0), "photos/cat.jpg"), "zip"]
    ]
    for (const [content, expected] of cases) {
      assert.strictEqual(detectFileType({ filename: "upload", bytes: content }), expected, expected)
    }
  })

  it("falls back to the extension, then the content type, for formats without a signature", () => {
    const text = new TextEncoder().encode("a,b\n1,2\n")
    assert.strictEqual(detectFileType({ filename: "notes.MD", bytes: text }), "markdown")
    assert.strictEqual(detectFileType({ filename: "table.csv", contentType: "text/markdown", bytes: text }), "csv")
    assert.strictEqual(
      detectFileType({ filename: "upload", contentType: "text/markdown; charset=utf-8", bytes: text }),
      "markdown"
    )
    assert.strictEqual(
      detectFileType({ filename: "upload", contentType: "application/octet-stream", bytes: text }),
      "text"
    )
    assert.strictEqual(
      detectFileType({ filename: "page", bytes: new TextEncoder().encode("\n<!DOCTYPE html><p>x</p>") }),
      "html"
    )
  })

  it("calls undecodable bytes binary, and decodes UTF-16 text with a byte-order mark", () => {
    assert.strictEqual(detectFileType({ filename: "blob", bytes: bytes(0x00, 0x9c, 0xff, 0x10) }), "binary")
    assert.strictEqual(detectFileType({ filename: "blob", bytes: bytes(0xff, 0xfe, "h", 0, "i", 0) }), "text")
  })
})

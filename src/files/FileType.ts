/**
 * Decides what kind of file an upload is: magic bytes first, then the filename's extension, then the declared
 * content type, and for bytes with no signature whether they decode as text. Pure and synchronous (it reads
 * at most the first few kilobytes plus a text-validity pass); it never parses the document itself.
 */
import { Schema } from "effect"

export const FileType = Schema.Literals([
  "pdf",
  "docx",
  "pptx",
  "xlsx",
  "odt",
  "ods",
  "odp",
  "epub",
  "rtf",
  "html",
  "markdown",
  "text",
  "csv",
  "json",
  "png",
  "jpeg",
  "gif",
  "bmp",
  "tiff",
  "webp",
  "mp3",
  "wav",
  "m4a",
  "mp4",
  "ogg",
  "webm",
  "flac",
  "zip",
  "legacy-office",
  "binary"
])
export type FileType = typeof FileType.Type

/** Images the OCR engine decodes; its leptonica build has no TIFF reader, so TIFF is detected but not read. */
export const imageTypes: ReadonlySet<FileType> = new Set(["png", "jpeg", "gif", "bmp", "webp"])
export const audioTypes: ReadonlySet<FileType> = new Set(["mp3", "wav", "m4a", "mp4", "ogg", "webm", "flac"])
/** Formats whose content is plain UTF-8 text that is already acceptable markdown. */
export const plainTextTypes: ReadonlySet<FileType> = new Set(["markdown", "text", "csv", "json"])
/** Formats read through officeparser's document model. */
export const officeTypes: ReadonlySet<FileType> = new Set(["pptx", "xlsx", "odt", "ods", "odp", "epub", "rtf"])

/** The conventional extension and media type of each detected type (transcription servers read both). */
export const fileTypeInfo: Record<FileType, { readonly extension: string; readonly mime: string }> = {
  pdf: { extension: "pdf", mime: "application/pdf" },
  docx: { extension: "docx", mime: "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
  pptx: { extension: "pptx", mime: "application/vnd.openxmlformats-officedocument.presentationml.presentation" },
  xlsx: { extension: "xlsx", mime: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
  odt: { extension: "odt", mime: "application/vnd.oasis.opendocument.text" },
  ods: { extension: "ods", mime: "application/vnd.oasis.opendocument.spreadsheet" },
  odp: { extension: "odp", mime: "application/vnd.oasis.opendocument.presentation" },
  epub: { extension: "epub", mime: "application/epub+zip" },
  rtf: { extension: "rtf", mime: "application/rtf" },
  html: { extension: "html", mime: "text/html" },
  markdown: { extension: "md", mime: "text/markdown" },
  text: { extension: "txt", mime: "text/plain" },
  csv: { extension: "csv", mime: "text/csv" },
  json: { extension: "json", mime: "application/json" },
  png: { extension: "png", mime: "image/png" },
  jpeg: { extension: "jpg", mime: "image/jpeg" },
  gif: { extension: "gif", mime: "image/gif" },
  bmp: { extension: "bmp", mime: "image/bmp" },
  tiff: { extension: "tiff", mime: "image/tiff" },
  webp: { extension: "webp", mime: "image/webp" },
  mp3: { extension: "mp3", mime: "audio/mpeg" },
  wav: { extension: "wav", mime: "audio/wav" },
  m4a: { extension: "m4a", mime: "audio/mp4" },
  mp4: { extension: "mp4", mime: "video/mp4" },
  ogg: { extension: "ogg", mime: "audio/ogg" },
  webm: { extension: "webm", mime: "audio/webm" },
  flac: { extension: "flac", mime: "audio/flac" },
  zip: { extension: "zip", mime: "application/zip" },
  "legacy-office": { extension: "doc", mime: "application/x-ole-storage" },
  binary: { extension: "bin", mime: "application/octet-stream" }
}

const byExtension: Record<string, FileType> = {
  pdf: "pdf",
  docx: "docx",
  pptx: "pptx",
  xlsx: "xlsx",
  odt: "odt",
  ods: "ods",
  odp: "odp",
  epub: "epub",
  rtf: "rtf",
  html: "html",
  htm: "html",
  xhtml: "html",
  md: "markdown",
  markdown: "markdown",
  mdx: "markdown",
  txt: "text",
  text: "text",
  log: "text",
  csv: "csv",
  tsv: "csv",
  json: "json",
  jsonl: "json",
  ndjson: "json",
  png: "png",
  jpg: "jpeg",
  jpeg: "jpeg",
  gif: "gif",
  bmp: "bmp",
  tif: "tiff",
  tiff: "tiff",
  webp: "webp",
  mp3: "mp3",
  mpga: "mp3",
  mpeg: "mp3",
  wav: "wav",
  m4a: "m4a",
  mp4: "mp4",
  ogg: "ogg",
  oga: "ogg",
  opus: "ogg",
  webm: "webm",
  flac: "flac",
  zip: "zip",
  doc: "legacy-office",
  xls: "legacy-office",
  ppt: "legacy-office"
}

const byMediaType: Record<string, FileType> = {
  "application/pdf": "pdf",
  "text/html": "html",
  "application/xhtml+xml": "html",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/plain": "text",
  "text/csv": "csv",
  "text/tab-separated-values": "csv",
  "application/json": "json",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "video/mp4": "mp4",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
  "video/webm": "webm",
  "audio/flac": "flac",
  "audio/x-flac": "flac"
}
for (const [type, info] of Object.entries(fileTypeInfo)) {
  // `application/octet-stream` says nothing about the content: leave the decision to the bytes.
  if (type !== "binary") byMediaType[info.mime] ??= type as FileType
}

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  String.fromCharCode(...bytes.subarray(start, Math.min(end, bytes.length)))

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, offset = 0) =>
  bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte)

/** Finds an ASCII marker anywhere in the bytes; a ZIP's entry names are stored uncompressed, so this reads them. */
const contains = (bytes: Uint8Array, marker: string) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(marker, 0, "latin1")

const zipType = (bytes: Uint8Array): FileType => {
  // OpenDocument and EPUB store an uncompressed `mimetype` entry first, so its content sits at a fixed place.
  const head = ascii(bytes, 30, 100)
  if (head.startsWith("mimetype")) {
    if (head.includes("opendocument.text")) return "odt"
    if (head.includes("opendocument.spreadsheet")) return "ods"
    if (head.includes("opendocument.presentation")) return "odp"
    if (head.includes("epub+zip")) return "epub"
  }
  if (contains(bytes, "word/document.xml")) return "docx"
  if (contains(bytes, "ppt/presentation.xml")) return "pptx"
  if (contains(bytes, "xl/workbook.xml")) return "xlsx"
  if (contains(bytes, "[Content_Types].xml")) {
    if (contains(bytes, "word/")) return "docx"
    if (contains(bytes, "ppt/")) return "pptx"
    if (contains(bytes, "xl/")) return "xlsx"
  }
  return "zip"
}

const magicType = (bytes: Uint8Array): FileType | undefined => {
  if (ascii(bytes, 0, 1024).includes("%PDF-")) return "pdf"
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return zipType(bytes)
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return "legacy-office"
  if (ascii(bytes, 0, 5) === "{\\rtf") return "rtf"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg"
  if (ascii(bytes, 0, 4) === "GIF8") return "gif"
  if (ascii(bytes, 0, 2) === "BM" && bytes.length > 26) return "bmp"
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "tiff"
  if (ascii(bytes, 0, 4) === "RIFF") {
    const format = ascii(bytes, 8, 12)
    if (format === "WEBP") return "webp"
    if (format === "WAVE") return "wav"
  }
  if (ascii(bytes, 0, 4) === "fLaC") return "flac"
  if (ascii(bytes, 0, 4) === "OggS") return "ogg"
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return "webm"
  if (ascii(bytes, 4, 8) === "ftyp") return ascii(bytes, 8, 11) === "M4A" ? "m4a" : "mp4"
  if (ascii(bytes, 0, 3) === "ID3") return "mp3"
  // An MPEG audio frame header without ID3 tag: 11 sync bits, layer III or II (layer I's bits would also match a
  // UTF-16 byte-order mark), a bitrate index that is not "bad" and a sample rate that is not reserved.
  if (bytes.length > 3 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0) {
    const layer = bytes[1]! & 0x06
    if ((layer === 0x02 || layer === 0x04) && (bytes[2]! & 0xf0) !== 0xf0 && (bytes[2]! & 0x0c) !== 0x0c) return "mp3"
  }
  return undefined
}

const extensionOf = (filename: string) => {
  const base = filename.split(/[\\/]/).pop() ?? ""
  const dot = base.lastIndexOf(".")
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ""
}

const mediaTypeOf = (contentType: string | undefined) => contentType?.split(";")[0]?.trim().toLowerCase() ?? ""

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Decodes bytes that are meant to be text: UTF-8 (with or without a byte-order mark) or UTF-16 with a BOM.
 * `undefined` when they are not text: invalid UTF-8, or control characters a text file does not contain.
 */
export const decodeText = (bytes: Uint8Array): string | undefined => {
  let text: string
  try {
    if (startsWith(bytes, [0xff, 0xfe])) text = new TextDecoder("utf-16le", { fatal: true }).decode(bytes.subarray(2))
    else if (startsWith(bytes, [0xfe, 0xff])) {
      text = new TextDecoder("utf-16be", { fatal: true }).decode(bytes.subarray(2))
    } else text = utf8.decode(startsWith(bytes, [0xef, 0xbb, 0xbf]) ? bytes.subarray(3) : bytes)
  } catch {
    return undefined
  }
  // NUL and the C0 controls other than tab, newline, form feed, carriage return and escape mark binary data.
  if (/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/.test(text)) return undefined
  return text.replace(/\r\n?/g, "\n")
}

const sniffText = (text: string): FileType => {
  const head = text.trimStart().slice(0, 512).toLowerCase()
  if (head.startsWith("<!doctype html") || head.startsWith("<html") || /^<(head|body)[\s>]/.test(head)) return "html"
  return "text"
}

export interface DetectInput {
  readonly filename: string
  readonly contentType?: string | undefined
  readonly bytes: Uint8Array
}

/** The type of an upload; never fails (unrecognised bytes are `binary`, unrecognised text is `text`). */
export const detectFileType = (file: DetectInput): FileType => {
  const magic = magicType(file.bytes)
  if (magic !== undefined) return magic
  const declared = byExtension[extensionOf(file.filename)] ?? byMediaType[mediaTypeOf(file.contentType)]
  if (declared !== undefined) return declared
  const text = decodeText(file.bytes)
  return text === undefined ? "binary" : sniffText(text)
}

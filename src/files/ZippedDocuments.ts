/**
 * Office, OpenDocument and EPUB files are zip archives, and their parsers (mammoth's JSZip, officeparser) inflate
 * every part into memory with no cap of their own: a 50 KB DOCX can hold gigabytes of zeros. Such a file is read
 * with the codebase importer's checks (`archives/ZipReader.checkZip`: ratio per entry, inflation budget for the
 * whole file, inflating off the event loop) before any parser sees it. It decides nothing about the content.
 */
import type { ArchiveLimits } from "../archives/ZipReader.ts"
import type { FileType } from "./FileType.ts"

export const zippedDocumentTypes: ReadonlySet<FileType> = new Set<FileType>([
  "docx",
  "pptx",
  "xlsx",
  "odt",
  "ods",
  "odp",
  "epub"
])

/**
 * A real document's parts inflate 3-10 times in all (a sparse spreadsheet more): 20 times the file, at least
 * 64 MiB, and never more than 256 MiB, the most a parser could hold inside a document worker's 1 GiB heap (XML
 * becomes UTF-16 strings and a DOM). Per part the same 100× ratio as Apache POI's zip-bomb guard. Thousands of parts
 * is already a large deck; no part-size cap of its own beyond the total.
 */
export const defaultDocumentArchiveLimits: ArchiveLimits = {
  maxFiles: 10_000,
  maxFileBytes: 256 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
  maxRatio: 100,
  maxInflation: 20,
  inflationFloorBytes: 64 * 1024 * 1024
}

/**
 * The first half of building a snapshot: every selected file classified (§9.2), hashed, given a role and a
 * change kind against the previous snapshot, and the list of files that need a fresh tree-sitter parse — only
 * indexed files whose bytes changed, or that have no stored parse; the others reuse the previous snapshot's.
 */
import type { FileParse } from "../parse/SyntaxExtractor.ts"
import type { ParsedLanguage } from "../parse/Languages.ts"
import type { SourceFile } from "../parse/SourceParser.ts"
import { sha256 } from "../intel/Chunker.ts"
import { type ClassifiedFile, classifyFile, type FileRole, fileRole } from "../source/FileClassifier.ts"
import type { ArchiveEntry } from "../../archives/ZipReader.ts"

export interface PreviousFile {
  readonly contentHash: string
  readonly parse: FileParse | null
}

export interface PlannedFile extends ClassifiedFile {
  readonly contentHash: string
  readonly role: FileRole
  readonly changeKind: "added" | "modified" | "unchanged"
  readonly reusedParse: FileParse | null
}

export interface SnapshotPlan {
  readonly files: ReadonlyArray<PlannedFile>
  readonly toParse: ReadonlyArray<SourceFile>
  readonly deletedPaths: ReadonlyArray<string>
}

export const planSnapshot = (
  entries: ReadonlyArray<ArchiveEntry>,
  previous: ReadonlyMap<string, PreviousFile>,
  fullRebuild: boolean
): SnapshotPlan => {
  const files: Array<PlannedFile> = []
  const toParse: Array<SourceFile> = []
  for (const entry of entries) {
    const classified = classifyFile(entry.path, entry.bytes)
    const contentHash = sha256(entry.bytes)
    const before = previous.get(entry.path)
    const changeKind = before === undefined ? "added" : before.contentHash === contentHash ? "unchanged" : "modified"
    const reusedParse = !fullRebuild && changeKind === "unchanged" && classified.status === "indexed"
      ? before?.parse ?? null
      : null
    if (classified.status === "indexed" && reusedParse === null) {
      toParse.push({ path: entry.path, language: classified.language as ParsedLanguage, text: classified.text ?? "" })
    }
    files.push({ ...classified, contentHash, role: fileRole(entry.path), changeKind, reusedParse })
  }
  const present = new Set(entries.map((entry) => entry.path))
  const deletedPaths = [...previous.keys()].filter((path) => !present.has(path)).sort()
  return { files, toParse, deletedPaths }
}

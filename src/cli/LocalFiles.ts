/**
 * Reading the user's files for the CLI: whole files, a directory's retainable documents, and a failure that names
 * the path when one cannot be read (a usage error, exit 2 — the service was never asked).
 */
import { Effect, FileSystem, Path } from "effect"
import { fileTypeInfo } from "../files/FileType.ts"
import { CliFailure } from "./CliFailure.ts"

const unreadable = (path: string) => (error: { readonly message: string }) =>
  CliFailure.usage(`cannot read ${path}: ${error.message}`)

export const readBytes = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFile(path).pipe(Effect.mapError(unreadable(path)))
  })

export const readText = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFileString(path).pipe(Effect.mapError(unreadable(path)))
  })

export const writeBytes = (path: string, data: Uint8Array) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFile(path, data).pipe(
      Effect.mapError((error) => CliFailure.usage(`cannot write ${path}: ${error.message}`))
    )
  })

/** Types FileType knows but file retain refuses or cannot read as a document. */
const notDocuments = new Set(["zip", "doc", "bin", "tiff"])

/** Extensions file retain converts (FileType's, plus the usual spellings of the same types). */
const retainableExtensions = new Set([
  ...Object.values(fileTypeInfo).map((info) => info.extension).filter((extension) => !notDocuments.has(extension)),
  "markdown",
  "htm",
  "jpeg",
  "text"
])

/** Folders that hold tooling, not documents. */
const skippedFolders = new Set(["node_modules", ".git", ".hg", ".svn", "__pycache__"])

/** Every file under `dir` that file retain can convert, as paths relative to `dir`, sorted. */
export const retainableFilesIn = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const info = yield* fs.stat(dir).pipe(Effect.mapError(unreadable(dir)))
    if (info.type !== "Directory") return yield* CliFailure.usage(`${dir} is not a directory`)
    const entries = yield* fs.readDirectory(dir, { recursive: true }).pipe(Effect.mapError(unreadable(dir)))
    const files: Array<string> = []
    for (const entry of entries.sort()) {
      const parts = entry.split(path.sep)
      if (parts.some((part) => part.startsWith(".") || skippedFolders.has(part))) continue
      const extension = path.extname(entry).slice(1).toLowerCase()
      if (!retainableExtensions.has(extension)) continue
      const stat = yield* fs.stat(path.join(dir, entry)).pipe(Effect.mapError(unreadable(entry)))
      if (stat.type === "File") files.push(entry)
    }
    return files
  })

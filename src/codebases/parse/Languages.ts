/**
 * Which language a path is, and which prebuilt tree-sitter grammar (from `@vscode/tree-sitter-wasm`) parses it.
 * C has no grammar of its own in that package; the C++ grammar parses C sources (C is close to a subset of it),
 * so `.c`/`.h` files get symbols and edges too. Pure data: no parser is loaded here.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** Languages with a deep parse (symbols, imports, calls), each mapped to its grammar's wasm file name. */
export const grammarFiles = {
  typescript: "tree-sitter-typescript.wasm",
  tsx: "tree-sitter-tsx.wasm",
  javascript: "tree-sitter-javascript.wasm",
  jsx: "tree-sitter-javascript.wasm",
  python: "tree-sitter-python.wasm",
  go: "tree-sitter-go.wasm",
  rust: "tree-sitter-rust.wasm",
  java: "tree-sitter-java.wasm",
  c: "tree-sitter-cpp.wasm",
  cpp: "tree-sitter-cpp.wasm",
  csharp: "tree-sitter-c-sharp.wasm",
  ruby: "tree-sitter-ruby.wasm",
  php: "tree-sitter-php.wasm"
} as const

export type ParsedLanguage = keyof typeof grammarFiles

const bySuffix: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "jsx",
  ".py": "python",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".cxx": "cpp",
  ".hpp": "cpp",
  ".hh": "cpp",
  ".cs": "csharp",
  ".rb": "ruby",
  ".php": "php"
}

export const suffixOf = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? "" : name.slice(dot).toLowerCase()
}

/** The language of a path: a parsed language, else the suffix without its dot, else the lower-cased file name. */
export const languageOf = (path: string): string => {
  const suffix = suffixOf(path)
  const known = bySuffix[suffix]
  if (known !== undefined) return known
  if (suffix !== "") return suffix.slice(1)
  return path.slice(path.lastIndexOf("/") + 1).toLowerCase()
}

export const isParsedLanguage = (language: string): language is ParsedLanguage => language in grammarFiles

/** The directory holding the grammar wasm files and the tree-sitter runtime's own wasm. */
export const grammarDirectory = (): string =>
  join(dirname(createRequire(import.meta.url).resolve("@vscode/tree-sitter-wasm/package.json")), "wasm")

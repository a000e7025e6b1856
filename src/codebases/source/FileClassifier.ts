/**
 * Decides what a snapshot does with each file (behaviour reference §9.2): `excluded` (build output, dependencies,
 * binaries), `manifest_only` (listed but not chunked: unsupported types, binary content, generated or minified
 * text), `indexed` (deep tree-sitter parse) or `retained` (text kept as region chunks). Also the file's role
 * (§10.1), which weighs its chunks' significance. Pure functions over the path and bytes.
 */
import { isParsedLanguage, languageOf, suffixOf } from "../parse/Languages.ts"

export type FileStatus = "excluded" | "manifest_only" | "indexed" | "retained"

export interface ClassifiedFile {
  readonly path: string
  readonly language: string
  readonly status: FileStatus
  readonly reason: string | null
  readonly text: string | null
}

const excludedDirs = new Set([".git", ".next", "build", "coverage", "dist", "node_modules", "target", "vendor"])
const binarySuffixes = new Set([
  ".7z",
  ".a",
  ".bin",
  ".bmp",
  ".class",
  ".dll",
  ".dylib",
  ".exe",
  ".gif",
  ".gz",
  ".ico",
  ".jar",
  ".jpeg",
  ".jpg",
  ".mp3",
  ".mp4",
  ".o",
  ".otf",
  ".pdf",
  ".png",
  ".pyc",
  ".pyd",
  ".so",
  ".svg",
  ".tar",
  ".tgz",
  ".ttf",
  ".wav",
  ".webm",
  ".woff",
  ".woff2",
  ".zip",
  ".wasm"
])
const textSuffixes = new Set([
  ".c",
  ".cc",
  ".cpp",
  ".cxx",
  ".cs",
  ".css",
  ".go",
  ".graphql",
  ".h",
  ".hh",
  ".hpp",
  ".html",
  ".java",
  ".js",
  ".json",
  ".jsx",
  ".kt",
  ".md",
  ".mjs",
  ".cjs",
  ".mts",
  ".cts",
  ".php",
  ".py",
  ".rb",
  ".rs",
  ".scss",
  ".sh",
  ".sql",
  ".swift",
  ".toml",
  ".ts",
  ".tsx",
  ".txt",
  ".vue",
  ".xml",
  ".yaml",
  ".yml"
])
const manifestNames = new Set([
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "pyproject.toml",
  "requirements.txt",
  "requirements-dev.txt",
  "poetry.lock",
  "pipfile",
  "pipfile.lock",
  "cargo.toml",
  "cargo.lock",
  "go.mod",
  "go.sum",
  "composer.json",
  "composer.lock"
])

const maxTextBytes = 512 * 1024
const maxLineLength = 1200

const looksBinary = (bytes: Uint8Array): boolean => {
  const head = bytes.subarray(0, 2048)
  let control = 0
  for (const byte of head) {
    if (byte === 0) return true
    if (byte < 9 || (byte >= 14 && byte < 32)) control++
  }
  return head.length > 0 && control / head.length > 0.2
}

const decoder = new TextDecoder("utf-8", { fatal: true })
const decode = (bytes: Uint8Array): string => {
  try {
    return decoder.decode(bytes).replace(/^\uFEFF/, "")
  } catch {
    return Buffer.from(bytes).toString("latin1")
  }
}

export const classifyFile = (path: string, bytes: Uint8Array): ClassifiedFile => {
  const parts = path.split("/")
  const name = parts[parts.length - 1]!.toLowerCase()
  const suffix = suffixOf(path)
  const language = languageOf(path)
  const result = (status: FileStatus, reason: string | null, text: string | null = null): ClassifiedFile => ({
    path,
    language,
    status,
    reason,
    text
  })
  if (parts.slice(0, -1).some((part) => excludedDirs.has(part))) return result("excluded", "excluded_dir")
  if (binarySuffixes.has(suffix)) return result("excluded", "binary_extension")
  if (!textSuffixes.has(suffix) && !manifestNames.has(name)) return result("manifest_only", "unsupported_text_type")
  if (looksBinary(bytes)) return result("manifest_only", "binary_content")
  if (name.endsWith(".min.js") || name.endsWith(".min.css")) return result("manifest_only", "minified")
  if (bytes.length > maxTextBytes) return result("manifest_only", "large_text_file")
  const text = decode(bytes)
  if (text.split("\n").some((line) => line.length > maxLineLength)) {
    return result("manifest_only", "generated_long_lines")
  }
  return isParsedLanguage(language) ? result("indexed", null, text) : result("retained", null, text)
}

export type FileRole =
  | "vendored"
  | "generated"
  | "boilerplate"
  | "migration"
  | "fixture"
  | "test"
  | "docs"
  | "config"
  | "entrypoint"
  | "api_route"
  | "schema_model"
  | "shared_util"
  | "public_lib"
  | "unknown"

export const roleWeights: Readonly<Record<FileRole, number>> = {
  entrypoint: 0.95,
  api_route: 0.90,
  schema_model: 0.85,
  config: 0.70,
  public_lib: 0.70,
  migration: 0.55,
  shared_util: 0.50,
  unknown: 0.40,
  docs: 0.35,
  test: 0.20,
  fixture: 0.05,
  boilerplate: 0.05,
  generated: 0,
  vendored: 0
}
export const dismissRoles: ReadonlySet<FileRole> = new Set(["generated", "vendored", "boilerplate"])
export const highValueRoles: ReadonlySet<FileRole> = new Set([
  "entrypoint",
  "api_route",
  "config",
  "schema_model",
  "migration",
  "public_lib"
])

const inSet = (values: ReadonlyArray<string>) => new Set(values)
const vendoredParts = inSet([
  "node_modules",
  "vendor",
  "third_party",
  "third-party",
  ".venv",
  "venv",
  "site-packages",
  ".tox",
  ".eggs",
  "bower_components",
  "jspm_packages"
])
const generatedParts = inSet([
  "generated",
  "__generated__",
  "build",
  "dist",
  ".next",
  ".nuxt",
  ".turbo",
  ".svelte-kit",
  "out",
  "target",
  "coverage",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache"
])
const boilerplateNames = inSet([
  "license",
  "licence",
  "license.md",
  "license.txt",
  "notice",
  "notice.md",
  ".gitignore",
  ".gitattributes",
  ".editorconfig",
  ".prettierrc",
  ".eslintrc",
  ".eslintrc.json",
  ".eslintrc.js",
  ".dockerignore",
  ".npmignore",
  "code_of_conduct.md",
  "contributing.md",
  "security.md",
  "changelog.md",
  "authors",
  "authors.md",
  ".gitkeep",
  "py.typed"
])
const fixtureParts = inSet(["fixtures", "__fixtures__", "testdata", "test-data"])
const testParts = inSet(["tests", "test", "__tests__", "spec", "specs"])
const docsParts = inSet(["docs", "doc", "documentation"])
const configNames = inSet([
  "settings.py",
  "config.py",
  "configuration.py",
  "conf.py",
  "pyproject.toml",
  "setup.py",
  "setup.cfg",
  "pipfile",
  "pipfile.lock",
  "poetry.lock",
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "tsconfig.json",
  "jsconfig.json",
  ".babelrc",
  "go.mod",
  "go.sum",
  "cargo.toml",
  "cargo.lock",
  "composer.json",
  "composer.lock",
  "dockerfile",
  "docker-compose.yml",
  "docker-compose.yaml",
  "makefile"
])
const entrypointNames = inSet([
  "main.py",
  "__main__.py",
  "app.py",
  "server.py",
  "cli.py",
  "manage.py",
  "run.py",
  "wsgi.py",
  "asgi.py",
  "index.ts",
  "index.tsx",
  "index.js",
  "index.jsx",
  "index.mjs",
  "main.ts",
  "main.tsx",
  "main.js",
  "main.go",
  "main.rs",
  "program.cs"
])
const apiParts = inSet([
  "api",
  "apis",
  "routes",
  "router",
  "routers",
  "controllers",
  "controller",
  "handlers",
  "endpoints",
  "views",
  "resolvers"
])
const schemaParts = inSet(["models", "schemas", "types", "entities", "dto", "dtos", "interfaces", "domain"])
const utilParts = inSet(["utils", "util", "helpers", "helper", "common", "shared", "lib"])

/** §10.1: the first matching rule wins. `domain` counts as a schema folder (this codebase's own convention). */
export const fileRole = (path: string): FileRole => {
  const parts = path.toLowerCase().split("/")
  const name = parts[parts.length - 1]!
  const dirs = parts.slice(0, -1)
  const suffix = suffixOf(name)
  const anyDir = (values: ReadonlySet<string>) => dirs.some((part) => values.has(part))
  if (anyDir(vendoredParts)) return "vendored"
  if (
    anyDir(generatedParts) || /(\.min\.|\.bundle\.|\.generated\.|\.gen\.|_pb2\.|_pb\.|\.pb\.|\.tsbuildinfo$)/.test(name)
  ) return "generated"
  if (boilerplateNames.has(name)) return "boilerplate"
  if ((dirs.includes("alembic") && dirs.includes("versions")) || dirs.includes("migrations")) return "migration"
  if (anyDir(fixtureParts)) return "fixture"
  if (anyDir(testParts) || /^(test_.*|.*_test\.[a-z]+|.*\.test\.[a-z]+|.*\.spec\.[a-z]+)$/.test(name)) return "test"
  if (anyDir(docsParts) || [".md", ".mdx", ".rst", ".txt", ".adoc"].includes(suffix)) return "docs"
  if (
    configNames.has(name) || /^requirements.*\.txt$/.test(name) ||
    /^(vite|next|tailwind|webpack|rollup|esbuild|babel)\.config\./.test(name) ||
    [".toml", ".yaml", ".yml", ".ini", ".cfg", ".env"].includes(suffix)
  ) return "config"
  if (entrypointNames.has(name)) return "entrypoint"
  if (anyDir(apiParts) || /(routes?|router|controller|handler|endpoint|view|resolver|api)\.[a-z]+$/.test(name)) {
    return "api_route"
  }
  if (anyDir(schemaParts) || /(models?|schemas?|types?|entities|entity|dto|interfaces?)\.[a-z]+$/.test(name)) {
    return "schema_model"
  }
  if (anyDir(utilParts)) return "shared_util"
  if (parts.length <= 2 && [".py", ".ts", ".tsx", ".js", ".jsx", ".go", ".rs", ".java"].includes(suffix)) {
    return "public_lib"
  }
  return "unknown"
}

/**
 * Resolves an import specifier to a file of the same snapshot, per language: relative JS/TS specifiers with the
 * usual extension and `index` fallbacks (and `.js` written for a `.ts` source), Python modules (absolute and
 * relative, packages through `__init__.py`), relative Ruby/C/C++ includes, and dotted or `::` paths (Java, PHP,
 * Rust, Go, C#) by the longest matching path suffix. Bare package names resolve to nothing (`to_path` null).
 */
import { isParsedLanguage } from "../parse/Languages.ts"

const scriptExtensions = [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]

const dirOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")

const joinPath = (base: string, relative: string): string | null => {
  const parts = base === "" ? [] : base.split("/")
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (parts.length === 0) return null
      parts.pop()
    } else parts.push(part)
  }
  return parts.join("/")
}

const stripSuffix = (path: string) => path.replace(/\.[^./]+$/, "")

export interface ImportResolver {
  readonly resolve: (fromPath: string, language: string, specifier: string) => string | null
}

export const makeImportResolver = (paths: ReadonlyArray<string>): ImportResolver => {
  const known = new Set(paths)
  const pythonModules = new Map<string, string>()
  const bySuffixKey = new Map<string, Array<string>>()
  // A go import names a package directory: each trailing run of directory segments maps to one of its files.
  const goDirectories = new Map<string, string>()
  for (const path of paths) {
    if (path.endsWith(".go") && !path.endsWith("_test.go")) {
      const dirs = dirOf(path).split("/")
      for (let start = 0; start < dirs.length; start++) {
        const key = dirs.slice(start).join("/")
        if (key !== "" && !goDirectories.has(key)) goDirectories.set(key, path)
      }
    }
    if (path.endsWith(".py")) {
      const module = stripSuffix(path).replace(/\/__init__$/, "").replaceAll("/", ".")
      pythonModules.set(module, path)
    }
    // Every trailing run of path segments (without extension) maps back to the file, for dotted-path imports.
    const segments = stripSuffix(path).split("/")
    for (let start = 0; start < segments.length; start++) {
      const key = segments.slice(start).join("/").toLowerCase()
      const list = bySuffixKey.get(key) ?? []
      if (list.length < 8) list.push(path)
      bySuffixKey.set(key, list)
    }
  }

  const firstKnown = (candidates: ReadonlyArray<string>) => candidates.find((candidate) => known.has(candidate)) ?? null

  const script = (fromPath: string, specifier: string) => {
    if (!specifier.startsWith(".")) return null
    const base = joinPath(dirOf(fromPath), specifier)
    if (base === null) return null
    const stem = base.replace(/\.(js|jsx|mjs|cjs)$/, "")
    return firstKnown([
      base,
      ...scriptExtensions.map((ext) => base + ext),
      ...scriptExtensions.map((ext) => stem + ext),
      ...scriptExtensions.map((ext) => `${base}/index${ext}`)
    ])
  }

  const python = (fromPath: string, specifier: string) => {
    const dots = specifier.match(/^\.*/)![0].length
    const rest = specifier.slice(dots)
    let module = rest
    if (dots > 0) {
      const packageParts = dirOf(fromPath).split("/").filter((part) => part !== "")
      const up = packageParts.slice(0, Math.max(0, packageParts.length - (dots - 1)))
      module = [...up, ...(rest === "" ? [] : [rest])].join(".")
    }
    return pythonModules.get(module) ?? pythonModules.get(module.split(".").slice(0, -1).join(".")) ?? null
  }

  const relative = (fromPath: string, specifier: string, extensions: ReadonlyArray<string>) => {
    const base = joinPath(dirOf(fromPath), specifier)
    return base === null ? null : firstKnown([base, ...extensions.map((ext) => base + ext)])
  }

  /** Longest suffix match of a dotted / `::` / `\` path against the snapshot's files. */
  const bySuffix = (fromPath: string, segments: ReadonlyArray<string>) => {
    for (let start = 0; start < segments.length; start++) {
      const matches = bySuffixKey.get(segments.slice(start).join("/").toLowerCase())
      if (matches !== undefined && matches.length > 0) {
        return matches.find((match) => match !== fromPath) ?? null
      }
      if (segments.length - start <= 1) break
    }
    return null
  }

  const resolve = (fromPath: string, language: string, specifier: string): string | null => {
    if (!isParsedLanguage(language)) return null
    switch (language) {
      case "typescript":
      case "tsx":
      case "javascript":
      case "jsx":
        return script(fromPath, specifier)
      case "python":
        return python(fromPath, specifier)
      case "ruby":
        return specifier.startsWith(".") ? relative(fromPath, specifier, [".rb"]) : null
      case "c":
      case "cpp":
        return relative(fromPath, specifier, []) ?? bySuffix(fromPath, stripSuffix(specifier).split("/"))
      case "rust": {
        const path = specifier.replace(/::\{.*$/, "").split("::").filter((part) =>
          !["crate", "self", "super"].includes(part)
        )
        return bySuffix(fromPath, path) ?? bySuffix(fromPath, [...path, "mod"])
      }
      case "php":
        return specifier.includes(".php")
          ? relative(fromPath, specifier, [])
          : bySuffix(fromPath, specifier.split("\\").filter((part) => part !== ""))
      case "go": {
        const segments = specifier.split("/")
        for (let start = 0; start < segments.length; start++) {
          const found = goDirectories.get(segments.slice(start).join("/"))
          if (found !== undefined) return found
        }
        return null
      }
      default:
        return bySuffix(fromPath, specifier.split("."))
    }
  }
  return { resolve }
}

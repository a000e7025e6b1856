/**
 * The test files whose run cannot depend on the database tier, so that running them a second time on PostgreSQL
 * would repeat the same run: no module they import, directly or through others (relative imports, static or
 * `import("…")` with a literal path), is `test/support/TestDatabase.ts` (where a test's database comes from, for an
 * in-process server and a child process alike) or names `ENGRAM_TEST_DATABASE` (the variable the tiers differ by).
 * E.g. the GloVe and parser tests, the pure unit tests, and tests that open their own PGlite whatever the tier.
 * The tier reaches a test only through this repository's modules, imported by relative paths (`src/` and `layers/`
 * never read the variable; the only bare `engram` imports are the packed-package fixtures, which are not tests).
 */
import { existsSync, globSync, readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"

const imports =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g

export const tierIndependentTests = (root: string): Array<string> => {
  const tierModule = resolve(root, "test/support/TestDatabase.ts")
  const texts = new Map<string, string>()
  const read = (file: string) => {
    let text = texts.get(file)
    if (text === undefined) {
      text = readFileSync(file, "utf8")
      texts.set(file, text)
    }
    return text
  }
  const reachesTier = (start: string) => {
    const seen = new Set([start])
    const queue = [start]
    while (queue.length > 0) {
      const file = queue.pop()!
      if (file === tierModule) return true
      const text = read(file)
      if (text.includes("ENGRAM_TEST_DATABASE")) return true
      for (const match of text.matchAll(imports)) {
        const specifier = match[1] ?? match[2] ?? match[3]!
        if (!specifier.startsWith(".")) continue
        const target = resolve(dirname(file), specifier)
        if (seen.has(target) || !/\.(ts|mts|js|mjs)$/.test(target) || !existsSync(target)) continue
        seen.add(target)
        queue.push(target)
      }
    }
    return false
  }
  return globSync("test/**/*.test.ts", { cwd: root }).filter((file) => !reachesTier(resolve(root, file))).sort()
}

/**
 * Codebase globs, fnmatch-style: a table of what users write and what each must match, a backtracking glob that
 * used to hang the service answered at once, and the limits that keep matching cheap.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { globLimits, globProblem, translateGlob } from "../../src/domain/Glob.ts"
import { selectEntries } from "../../src/codebases/source/ArchiveSelection.ts"
import { compileGlobs } from "../../src/codebases/source/Globs.ts"

const cases: ReadonlyArray<readonly [string, string, boolean]> = [
  ["*.ts", "src/memory/recall/Recall.ts", true],
  ["*.ts", "README.md", false],
  ["src/*", "src/a/b/c.ts", true],
  ["src/*.ts", "src/a/b.ts", true],
  ["src/**/*.ts", "src/a/b.ts", true],
  ["docs/?eadme.md", "docs/readme.md", true],
  ["docs/?eadme.md", "docs/bread.md", false],
  ["[abc]*.py", "bar.py", true],
  ["[abc]*.py", "dar.py", false],
  ["[!abc]*.py", "dar.py", true],
  ["[a-c]x", "bx", true],
  ["[a-c]x", "dx", false],
  ["[]]x", "]x", true],
  ["[!]]x", "ax", true],
  ["a[", "a[", true],
  ["app/[slug]/page.ts", "app/s/page.ts", true],
  ["app/[[]slug]/page.ts", "app/[slug]/page.ts", true],
  ["*.{js,ts}", "a.js", false],
  ["*.{js,ts}", "a.{js,ts}", true],
  ["a.b", "axb", false],
  ["(x)+", "(x)+", true],
  ["**", "anything/at/all", true],
  ["*", "", true],
  ["?", "", false],
  ["[z-a]", "m", false]
]

describe("codebase globs", () => {
  it("match fnmatch-style: * and ? cross /, sets and ranges, everything else literal", () => {
    for (const [glob, path, expected] of cases) {
      assert.strictEqual(compileGlobs([glob])[0]!.matches(path), expected, `${glob} against ${path}`)
    }
  })

  it("a glob that makes a backtracking engine run for minutes answers at once", () => {
    const [hostile] = compileGlobs(["*a".repeat(16) + "*b"])
    assert.isFalse(hostile!.matches("a".repeat(4096)))
    assert.strictEqual(
      globProblem("*a".repeat(16) + "*b"),
      "a glob may have at most 16 wildcards (a run of * counts once)"
    )
  })

  it("refuses globs past the limits, and counts wildcards as it says", () => {
    assert.isUndefined(globProblem("src/**/*.ts"))
    assert.strictEqual(translateGlob("**?[ab]*").wildcards, 4)
    assert.isDefined(globProblem("x".repeat(globLimits.length + 1)))
    assert.isUndefined(globProblem("x".repeat(globLimits.length)))
  })

  it.effect("selects entries under the root with include and exclude globs, in path order", () =>
    Effect.gen(function*() {
      const entry = (path: string) => ({ path: `repo-sha/${path}`, bytes: new Uint8Array(0) })
      const selected = yield* selectEntries(
        ["src/b.ts", "src/a.ts", "src/a.test.ts", "docs/x.md", "src/vendor/z.ts"].map(entry),
        { rootPath: "src", includeGlobs: ["*.ts"], excludeGlobs: ["*.test.ts", "vendor/*"] }
      )
      assert.deepStrictEqual(selected.map((e) => e.path), ["a.ts", "b.ts"])
    }))
})

/**
 * The tree-sitter extraction for all twelve languages: symbols with kind, container and fully qualified name,
 * exportedness, import specifiers, calls attributed to their enclosing symbol, and cyclomatic complexity.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeImportResolver } from "../../src/codebases/graph/ImportResolver.ts"
import { louvain } from "../../src/codebases/graph/Communities.ts"
import { pageRank } from "../../src/codebases/graph/PageRank.ts"
import type { ParsedLanguage } from "../../src/codebases/parse/Languages.ts"
import { parseSource } from "../../src/codebases/parse/SourceParser.ts"
import { packParse, unpackParse } from "../../src/codebases/parse/StoredParse.ts"

const parse = (language: ParsedLanguage, text: string) =>
  Effect.promise(() => parseSource({ path: "x", language, text })).pipe(Effect.map((outcome) => {
    if (!outcome.ok) throw new Error(outcome.message)
    const { symbols, imports, calls } = outcome.parse
    return {
      symbols: symbols.map((s) => `${s.kind}:${s.fqName}:${s.exported ? "E" : "-"}:${s.complexity}`),
      imports: imports.map((i) => i.specifier),
      calls: calls.map((c) => `${c.callee}@${c.caller === -1 ? "<module>" : symbols[c.caller]!.fqName}`)
    }
  }))

const cases: ReadonlyArray<
  [ParsedLanguage, string, { symbols: Array<string>; imports: Array<string>; calls: Array<string> }]
> = [
  [
    "typescript",
    `import { a } from "./a.ts"\nexport class K { m(x: number) { return x > 1 && a(x) ? 1 : 2 } }\nconst f = () => new K()\ninterface I {}\nexport type T = string\n`,
    {
      symbols: ["class:K:E:1", "method:K.m:E:3", "function:f:-:1", "interface:I:-:1", "type:T:E:1"],
      imports: ["./a.ts"],
      calls: ["a@K.m", "K@f"]
    }
  ],
  ["tsx", `export function View() { return <div>{render()}</div> }\n`, {
    symbols: ["function:View:E:1"],
    imports: [],
    calls: ["render@View"]
  }],
  ["javascript", `const fs = require("fs")\nfunction go() { if (x) fs.readFile() }\n`, {
    symbols: ["variable:fs:-:1", "function:go:-:2"],
    imports: ["fs"],
    calls: ["require@fs", "readFile@go"]
  }],
  [
    "python",
    `import os\nfrom .a import b as c\nX = 1\nclass A:\n  def m(self, x):\n    if x and y: return foo(x)\n  def _p(self): pass\n`,
    {
      symbols: ["variable:X:E:1", "class:A:E:1", "method:A.m:E:3", "method:A._p:-:1"],
      imports: ["os", ".a"],
      calls: ["foo@A.m"]
    }
  ],
  [
    "go",
    `package p\nimport "fmt"\ntype S struct{}\nfunc (s *S) Run() { if true { fmt.Println(1) } }\nfunc helper() {}\n`,
    {
      symbols: ["class:S:E:1", "method:S.Run:E:2", "function:helper:-:1"],
      imports: ["fmt"],
      calls: ["Println@S.Run"]
    }
  ],
  ["rust", `use crate::a::b;\npub struct S;\nimpl S { pub fn run(&self) { helper(); } }\nfn helper() {}\n`, {
    symbols: ["class:S:E:1", "method:S.run:E:1", "function:helper:-:1"],
    imports: ["crate::a::b"],
    calls: ["helper@S.run"]
  }],
  ["java", `import a.b.C;\npublic class K { public void m() { foo(); new C(); } private int p() { return 1; } }\n`, {
    symbols: ["class:K:E:1", "method:K.m:E:1", "method:K.p:-:1"],
    imports: ["a.b.C"],
    calls: ["foo@K.m", "C@K.m"]
  }],
  ["c", `#include "x.h"\nstatic int f(int a) { if (a) return g(a); return 0; }\nstruct S { int a; };\n`, {
    symbols: ["function:f:-:2", "class:S:E:1"],
    imports: ["x.h"],
    calls: ["g@f"]
  }],
  ["cpp", `#include "y.hpp"\nnamespace n { class C { public: void m() { run(); } }; }\n`, {
    symbols: ["module:n:E:1", "class:n.C:E:1", "method:n.C.m:E:1"],
    imports: ["y.hpp"],
    calls: ["run@n.C.m"]
  }],
  [
    "csharp",
    `using System.Text;\nnamespace N { public class C { public void M() { Foo(); } private void P() {} } }\n`,
    {
      symbols: ["module:N:-:1", "class:N.C:E:1", "method:N.C.M:E:1", "method:N.C.P:-:1"],
      imports: ["System.Text"],
      calls: ["Foo@N.C.M"]
    }
  ],
  ["ruby", `require_relative 'x'\nmodule M\n class C\n  def m\n   helper(1) if x\n  end\n end\nend\n`, {
    symbols: ["module:M:E:1", "class:M.C:E:1", "method:M.C.m:E:2"],
    imports: ["./x"],
    calls: ["require_relative@<module>", "helper@M.C.m"]
  }],
  [
    "php",
    `<?php\nuse B\\C;\nclass K { public function m() { foo(); $this->bar(); } private function p() {} }\nfunction g() {}\n`,
    {
      symbols: ["class:K:E:1", "method:K.m:E:1", "method:K.p:-:1", "function:g:E:1"],
      imports: ["B\\C"],
      calls: ["foo@K.m", "bar@K.m"]
    }
  ]
]

describe("tree-sitter extraction", () => {
  for (const [language, text, expected] of cases) {
    it.effect(language, () => Effect.map(parse(language, text), (actual) => assert.deepStrictEqual(actual, expected)))
  }

  // What a snapshot stores of every parse reads back as the same parse (the next refresh reuses it), and a parse
  // stored as an object by an earlier version is read as it is.
  for (const [language, text] of cases) {
    it.effect(`${language}: the stored parse reads back whole`, () =>
      Effect.gen(function*() {
        const outcome = yield* Effect.promise(() => parseSource({ path: "x", language, text }))
        if (!outcome.ok) throw new Error(outcome.message)
        const stored = JSON.parse(JSON.stringify(packParse(outcome.parse)))
        assert.deepStrictEqual(unpackParse(stored), outcome.parse)
        assert.deepStrictEqual(unpackParse(JSON.parse(JSON.stringify(outcome.parse))), outcome.parse)
        assert.isBelow(JSON.stringify(stored).length, JSON.stringify(outcome.parse).length)
      }))
  }

  it("resolves imports per language against the snapshot's files", () => {
    const resolver = makeImportResolver([
      "src/a.ts",
      "src/lib/index.ts",
      "pkg/__init__.py",
      "pkg/mod.py",
      "com/x/Util.java",
      "app/util.go"
    ])
    assert.strictEqual(resolver.resolve("src/b.ts", "typescript", "./a.js"), "src/a.ts")
    assert.strictEqual(resolver.resolve("src/b.ts", "typescript", "./lib"), "src/lib/index.ts")
    assert.strictEqual(resolver.resolve("src/b.ts", "typescript", "effect"), null)
    assert.strictEqual(resolver.resolve("pkg/other.py", "python", ".mod"), "pkg/mod.py")
    assert.strictEqual(resolver.resolve("main.py", "python", "pkg"), "pkg/__init__.py")
    assert.strictEqual(resolver.resolve("com/y/Main.java", "java", "com.x.Util"), "com/x/Util.java")
    assert.strictEqual(resolver.resolve("main.go", "go", "example.com/app"), "app/util.go")
  })

  it("finds the two communities of a barbell graph and ranks its hub first", () => {
    const edges = [[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [2, 3]].map(([a, b]) => ({
      a: a!,
      b: b!,
      weight: 1
    }))
    const community = louvain(6, edges)
    assert.deepStrictEqual([...community], [0, 0, 0, 1, 1, 1])
    const rank = pageRank(4, [{ from: 1, to: 0, weight: 1 }, { from: 2, to: 0, weight: 1 }, {
      from: 3,
      to: 0,
      weight: 1
    }])
    assert.isTrue(rank[0]! > rank[1]! && Math.abs(rank.reduce((sum, value) => sum + value, 0) - 1) < 1e-6)
  })
})

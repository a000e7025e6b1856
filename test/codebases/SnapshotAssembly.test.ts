/**
 * A snapshot's assembly runs in slices: it gives the event loop back many times while it assembles a tree of a few
 * hundred files, and no slice holds half of it (in one piece it held the server's thread for about 400 ms on this
 * repository's `src/`, and every request waited). Run whole or in slices, it assembles the same rows.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultTriageSettings } from "../../src/codebases/intel/Significance.ts"
import type { FileParse } from "../../src/codebases/parse/SyntaxExtractor.ts"
import { parseSource } from "../../src/codebases/parse/SourceParser.ts"
import { assembleSnapshot, assemblingSnapshot } from "../../src/codebases/snapshot/SnapshotAssembly.ts"
import { planSnapshot } from "../../src/codebases/snapshot/SnapshotPlan.ts"

/** Files that import the one before and call its functions: one connected graph, as a real tree is. */
const tree = (count: number) =>
  Array.from({ length: count }, (_, n) => ({
    path: `src/part${Math.floor(n / 40)}/file${n}.ts`,
    text: [
      n === 0
        ? ""
        : `import { work${n - 1}, helper${n - 1} } from "../part${Math.floor((n - 1) / 40)}/file${n - 1}.ts"`,
      `export function work${n}(x: number) { if (x > ${n}) { return ${
        n === 0 ? "x" : `work${n - 1}(x - 1)`
      } } return 0 }`,
      `export const helper${n} = (y: string) => y.length > 2 ? ${n === 0 ? "1" : `helper${n - 1}(y)`} : 2`,
      `export class Thing${n} { run() { return work${n}(${n}) + helper${n}("abc") } }`
    ].join("\n")
  }))

describe("snapshot assembly", () => {
  it.effect(
    "yields often on a tree of 300 files, no slice holds half of it, and assembles what a whole run does",
    () =>
      Effect.gen(function*() {
        const files = tree(300)
        const plan = planSnapshot(
          files.map((file) => ({ path: file.path, bytes: new TextEncoder().encode(file.text) })),
          new Map(),
          true
        )
        const parses = new Map<string, FileParse>()
        for (const file of plan.toParse) {
          const outcome = yield* Effect.promise(() => parseSource(file))
          if (outcome.ok) parses.set(file.path, outcome.parse)
        }
        assert.strictEqual(parses.size, 300)
        const input = {
          snapshotId: "snapshot-1",
          files: plan.files,
          parses,
          parseFailures: new Map<string, string>(),
          deletedPaths: [],
          previousRoutes: new Map(),
          settings: defaultTriageSettings,
          lines: new Map(files.map((file) => [file.path, file.text.split("\n")]))
        }
        const whole = assembleSnapshot(input)
        // Once more in slices, timing each one.
        const work = assemblingSnapshot(input)
        const slices: Array<number> = []
        let started = performance.now()
        let step = work.next()
        while (step.done !== true) {
          slices.push(performance.now() - started)
          started = performance.now()
          step = work.next()
        }
        slices.push(performance.now() - started)
        assert.deepStrictEqual(step.value, whole)
        assert.isAbove(slices.length, 50)
        const total = slices.reduce((sum, slice) => sum + slice, 0)
        assert.isBelow(Math.max(...slices), total / 2, `slices ${slices.map((slice) => slice.toFixed(1)).join(" ")}`)
        assert.isAbove(whole.chunks.length, 300)
      }),
    { timeout: 120_000 }
  )
})

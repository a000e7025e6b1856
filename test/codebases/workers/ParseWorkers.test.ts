/**
 * Code parsing on the shared worker pool: files parsed on worker threads come back in the order given and equal the
 * in-process parse; a batch past the time limit fails with the limit named (the pool's replacement of lost workers
 * is tested with the document workers, which share it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { makeParseWorkers } from "../../../src/codebases/workers/ParseWorkers.ts"
import type { SourceFile } from "../../../src/codebases/parse/SourceParser.ts"

const files: ReadonlyArray<SourceFile> = Array.from({ length: 150 }, (_, i) => ({
  path: `src/file${i}.ts`,
  language: "typescript",
  text:
    `import { helper${i} } from "./helper${i}.ts"\nexport function run${i}(x: number) { return x > ${i} ? helper${i}(x) : 0 }\n`
}))

describe("ParseWorkers", () => {
  it.live(
    "files parsed on two workers equal the in-process parse, in the order given",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const workers = yield* makeParseWorkers({ workers: 2 })
        const inProcess = yield* makeParseWorkers({ workers: 0 })
        const threaded = yield* workers.parse(files)
        assert.deepStrictEqual(threaded.map((outcome) => outcome.path), files.map((file) => file.path))
        assert.deepStrictEqual(threaded, yield* inProcess.parse(files))
        assert.isTrue(threaded.every((outcome) => outcome.ok))
      })),
    120_000
  )

  it.live("a batch past the time limit fails, naming the limit", () =>
    Effect.scoped(Effect.gen(function*() {
      // A limit no parse can meet (the worker is already warm: the limit covers only the batch).
      const workers = yield* makeParseWorkers({ workers: 1, timeout: "1 millis" })
      const slow = yield* Effect.exit(workers.parse(files))
      assert.isTrue(Exit.isFailure(slow))
      assert.include(String(slow), "a parse batch took longer than 1ms")
    })), 120_000)
})

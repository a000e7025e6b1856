/**
 * Entry point of a code-parse worker thread (spawned by `ParseWorkers`): parses one batch of source files per
 * message with tree-sitter and answers with the outcomes. It holds only the loaded grammars, so the parent may
 * end it at any moment (time limit, shutdown).
 */
import { parentPort } from "node:worker_threads"
import { lowerThreadPriority } from "../../workers/BackgroundPriority.ts"
import { parseSources, type SourceFile, warmUp } from "../parse/SourceParser.ts"

lowerThreadPriority()

parentPort?.on("message", (files: ReadonlyArray<SourceFile>) => {
  void parseSources(files).then((outcomes) => parentPort?.postMessage(outcomes))
})

// Once every grammar is loaded the parent may start a batch's time limit.
void warmUp().then(() => parentPort?.postMessage("ready"), () => parentPort?.postMessage("ready"))

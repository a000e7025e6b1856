/**
 * Entry point of a code-parse worker thread (spawned by `ParseWorkers`): parses one batch of source files per
 * message with tree-sitter and answers with the outcomes. It holds only the loaded grammars, so the parent may
 * end it at any moment (time limit, shutdown).
 */
import { readlinkSync } from "node:fs"
import { constants, setPriority } from "node:os"
import { parentPort } from "node:worker_threads"
import { parseSources, type SourceFile, warmUp } from "../parse/SourceParser.ts"

/**
 * Parsing is background work: this thread gives way to the server's event loop and database thread. On Linux a
 * thread has its own nice value, set through its thread id (`/proc/thread-self` names it); elsewhere the worker
 * keeps the process's priority.
 */
const yieldToForeground = () => {
  try {
    const threadId = Number(readlinkSync("/proc/thread-self").split("/").pop())
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, constants.priority.PRIORITY_BELOW_NORMAL)
  } catch {
    // Not Linux, or not allowed: parse at normal priority.
  }
}

yieldToForeground()

parentPort?.on("message", (files: ReadonlyArray<SourceFile>) => {
  void parseSources(files).then((outcomes) => parentPort?.postMessage(outcomes))
})

// Once every grammar is loaded the parent may start a batch's time limit.
void warmUp().then(() => parentPort?.postMessage("ready"), () => parentPort?.postMessage("ready"))

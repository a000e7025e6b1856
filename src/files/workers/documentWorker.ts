/**
 * Entry point of a document worker thread (spawned by `DocumentWorkers`): converts one document per message with
 * `documentToMarkdown` and answers with the markdown or the parser's failure. It holds no state, so the parent can
 * end it at any moment (time limit, memory limit, shutdown).
 */
import { Cause, Effect, Exit, Option } from "effect"
import { parentPort } from "node:worker_threads"
import { describeCause, type ParsedFile, type ParserError } from "../FileParser.ts"
import { documentToMarkdown, loadConverters } from "../formats/DocumentMarkdown.ts"
import type { DocumentReply, DocumentRequest } from "./DocumentWorkers.ts"

const reply = (exit: Exit.Exit<ParsedFile, ParserError>): DocumentReply => {
  if (Exit.isSuccess(exit)) {
    const { markdown, pages } = exit.value
    return pages === undefined ? { ok: true, markdown } : { ok: true, markdown, pages }
  }
  return Option.match(Cause.findErrorOption(exit.cause), {
    onSome: (error): DocumentReply => ({ ok: false, reason: error.reason, message: error.message }),
    onNone: (): DocumentReply => ({
      ok: false,
      reason: "failed",
      message: `internal error: ${describeCause(Cause.squash(exit.cause))}`
    })
  })
}

parentPort?.on("message", (request: DocumentRequest) => {
  Effect.runCallback(documentToMarkdown(request.type, request.bytes), {
    onExit: (exit) => parentPort?.postMessage(reply(exit))
  })
})

// Once every parser is loaded the parent may start a conversion's time limit.
Effect.runCallback(loadConverters, { onExit: () => parentPort?.postMessage("ready") })

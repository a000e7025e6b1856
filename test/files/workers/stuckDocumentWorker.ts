/**
 * A document worker for tests (passed to `makeDocumentWorkers` as its script): the real worker, except that a
 * document reading `stuck:<channel>` is never finished. The worker announces on that BroadcastChannel that it has
 * the document, then blocks its thread until the parent ends it — a parser stuck on a hostile file, on any machine.
 */
import { BroadcastChannel, parentPort } from "node:worker_threads"
import type { DocumentRequest } from "../../../src/files/workers/DocumentWorkers.ts"

const marker = "stuck:"

parentPort?.on("message", (request: DocumentRequest) => {
  const text = new TextDecoder().decode(request.bytes)
  if (!text.startsWith(marker)) return
  new BroadcastChannel(text.slice(marker.length)).postMessage("converting")
  // Nothing ever notifies this address: only `worker.terminate()` ends the wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
})

// Imported after the listener above is registered, so the real worker never starts converting a stuck document
// (a static import would run first and register its listener first).
await import("../../../src/files/workers/documentWorker.ts")

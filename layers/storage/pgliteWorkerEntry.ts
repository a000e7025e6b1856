/**
 * Entry point of the PGlite worker thread (started by `PgliteWorker`): opens PGlite, then runs the raw protocol
 * batches it is sent strictly one after another and answers each with PGlite's reply bytes. It keeps no state of its
 * own besides the database, never looks inside a batch, and closes PGlite only when asked.
 */
import type { PGlite } from "@electric-sql/pglite"
import { parentPort, workerData } from "node:worker_threads"
import { openPglite } from "./PgliteOpen.ts"
import type { WorkerData, WorkerReply, WorkerRequest } from "./PgliteWorker.ts"
import { describeErrorChain } from "./ErrorChain.ts"

const port = parentPort
if (port === null) throw new Error("pgliteWorkerEntry runs only as a worker thread")

const reply = (message: WorkerReply, transfer: ReadonlyArray<ArrayBuffer> = []) => port.postMessage(message, transfer)

/** The reply as one buffer of its own. PGlite hands out views of its memory, valid only during the callback. */
const exec = (db: PGlite, message: Uint8Array): Promise<Uint8Array<ArrayBuffer>> => {
  const chunks: Array<Uint8Array<ArrayBuffer>> = []
  let size = 0
  return db.execProtocolRawStream(message, {
    onRawData: (data) => {
      chunks.push(new Uint8Array(data))
      size += data.length
    }
  }).then(() => {
    if (chunks.length === 1) return chunks[0]!
    const joined = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      joined.set(chunk, offset)
      offset += chunk.length
    }
    return joined
  })
}

const failed = (error: unknown) => reply({ _tag: "Failed", message: describeErrorChain(error) })

const run = (db: PGlite, request: WorkerRequest): Promise<void> => {
  switch (request._tag) {
    case "Exec":
      return exec(db, request.message).then((data) => reply({ _tag: "Data", data }, [data.buffer]), failed)
    case "Copy":
      return db.query(request.statement, [], { blob: new Blob([request.data]) })
        .then(() => reply({ _tag: "Data", data: new Uint8Array(0) }), failed)
    case "Close":
      return db.close().then(() => reply({ _tag: "Closed" }), failed)
  }
}

openPglite((workerData as WorkerData).dataDir).then(
  (db) => {
    // Each request starts when the one before has answered: one session, batches in the order sent.
    let queue = Promise.resolve()
    port.on("message", (request: WorkerRequest) => {
      queue = queue.then(() => run(db, request))
    })
    reply({ _tag: "Ready" })
  },
  (error) => reply({ _tag: "OpenFailed", message: describeErrorChain(error) })
)

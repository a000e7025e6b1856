/**
 * PGlite on a worker thread of its own, so SQL runs on another core than HTTP, NLP and fusion. The main side is the
 * `PgliteProtocol` the wire-protocol bridge (`PgliteStream`) already speaks: raw protocol batches go to the worker by
 * message and come back as the raw reply bytes, transferred rather than copied. It never looks inside SQL or results,
 * and it never restarts a lost worker: an in-memory database would come back empty.
 */
import * as Effect from "effect/Effect"
import { Worker } from "node:worker_threads"
import type { PgliteProtocol } from "./PgliteStream.ts"
import { siblingScript } from "../../src/workers/SiblingScript.ts"

/** What the worker is started with. */
export interface WorkerData {
  /** Where PGlite keeps its files; in memory when omitted. */
  readonly dataDir: string | undefined
}

/** What the main thread asks the worker. The worker answers every request, in the order asked. */
export type WorkerRequest =
  | { readonly _tag: "Exec"; readonly message: Uint8Array }
  | { readonly _tag: "Copy"; readonly statement: string; readonly data: string }
  | { readonly _tag: "Close" }

/** What the worker says: once `Ready` or `OpenFailed` after starting, then one reply per request. */
export type WorkerReply =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "OpenFailed"; readonly message: string }
  | { readonly _tag: "Data"; readonly data: Uint8Array }
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "Closed" }

const entry = siblingScript(import.meta.url, "pgliteWorkerEntry")

/**
 * Starts a worker and waits until PGlite is open in it. Fails with the reason PGlite gave when it cannot open the
 * data directory. The caller closes what it gets (`close`); interrupting the start ends the thread.
 */
export const start = (dataDir: string | undefined): Effect.Effect<PgliteWorker, Error> =>
  Effect.callback<PgliteWorker, Error>((resume) => {
    const worker = new Worker(entry, { workerData: { dataDir } satisfies WorkerData })
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const fail = (message: string) => {
      cleanup()
      void worker.terminate()
      resume(Effect.fail(new Error(message)))
    }
    const onMessage = (reply: WorkerReply) => {
      if (reply._tag !== "Ready") return fail(reply._tag === "OpenFailed" ? reply.message : `unexpected ${reply._tag}`)
      cleanup()
      resume(Effect.succeed(new PgliteWorker(worker)))
    }
    const onError = (error: unknown) => fail(`the PGlite worker could not start: ${describe(error)}`)
    const onExit = (code: number) => fail(`the PGlite worker stopped while starting (exit code ${code})`)
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    return Effect.promise(() => worker.terminate())
  })

interface Pending {
  readonly resolve: (data: Uint8Array | undefined) => void
  readonly reject: (error: Error) => void
}

/**
 * The main thread's end of one worker. Calls reach the worker in the order they are made and the worker runs them one
 * after another, so replies match calls first in, first out. The thread keeps the process alive only while a call
 * waits for its reply, as PGlite on the event loop would. Once the worker is lost (crash, terminate, exit) every
 * waiting and later call fails with the reason.
 */
export class PgliteWorker implements PgliteProtocol {
  readonly #worker: Worker
  readonly #pending: Array<Pending> = []
  /** Settles when the last `runExclusive` caller is done: the next one starts after it. */
  #tail: Promise<unknown> = Promise.resolve()
  #closing: Promise<void> | undefined
  #lost: Error | undefined
  #onLost: (reason: Error) => void = ignore
  /** Settles with the reason when the worker goes away without being closed; never settles otherwise. */
  readonly lost: Promise<Error> = new Promise((resolve) => (this.#onLost = resolve))

  constructor(worker: Worker) {
    this.#worker = worker
    worker.on("message", (reply: WorkerReply) => this.#onReply(reply))
    // An `error` event is followed by `exit`, which fails what waits; this keeps the more telling reason.
    worker.on("error", (error) => {
      this.#lost ??= new Error(`the PGlite worker failed: ${describe(error)}`)
    })
    worker.on("exit", (code) => this.#onExit(code))
    worker.unref()
  }

  get closed(): boolean {
    return this.#closing !== undefined || this.#lost !== undefined
  }

  /** Runs `f` after every earlier caller's `f` has settled; the bridge holds it around each batch. */
  runExclusive<T>(f: () => Promise<T> | T): Promise<T> {
    const run = this.#tail.then(() => f())
    this.#tail = run.then(ignore, ignore)
    return run
  }

  /** Only for use inside `runExclusive`. The worker gets its own copy, transferred rather than cloned again. */
  execProtocolRawStream(
    message: Uint8Array,
    options?: { readonly onRawData: (data: Uint8Array) => void }
  ): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(new Error("PGlite is closed"))
    const bytes = new Uint8Array(message)
    return this.#call({ _tag: "Exec", message: bytes }, [bytes.buffer]).then((data) => {
      if (data !== undefined && data.length > 0) options?.onRawData(data)
    })
  }

  /**
   * Runs `COPY … FROM '/dev/blob'` with `data` as the blob, in the session as it stands (inside the caller's open
   * transaction): the worker runs it after every batch sent before it. See `src/storage/EmbeddedCopy.ts`.
   */
  copyFrom(statement: string, data: string): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(new Error("PGlite is closed"))
    return this.#call({ _tag: "Copy", statement, data }, []).then(ignore)
  }

  /**
   * Closes PGlite in the worker once the batches already sent have run (so its data directory is complete), then
   * ends the thread. Later calls fail. Ends the thread at once when the worker is already lost.
   */
  close(): Promise<void> {
    this.#closing ??= this.#lost !== undefined
      ? this.#worker.terminate().then(ignore)
      : this.#closeThenTerminate()
    return this.#closing
  }

  /** Ends the thread without closing PGlite, as a crash would. For tests of the failure path. */
  terminate(): Promise<void> {
    return this.#worker.terminate().then(ignore)
  }

  /** Asks the thread to close, then ends it whether or not it answered (waiting for both, as `close` promises). */
  async #closeThenTerminate(): Promise<void> {
    try {
      await this.#call({ _tag: "Close" }, [])
    } finally {
      await this.#worker.terminate()
    }
  }

  #call(request: WorkerRequest, transfer: ReadonlyArray<ArrayBuffer>): Promise<Uint8Array | undefined> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost)
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) this.#worker.ref()
      this.#pending.push({ resolve, reject })
      this.#worker.postMessage(request, transfer)
    })
  }

  #onReply(reply: WorkerReply): void {
    const pending = this.#pending.shift()
    if (pending === undefined) return
    if (this.#pending.length === 0) this.#worker.unref()
    switch (reply._tag) {
      case "Data":
        return pending.resolve(reply.data)
      case "Closed":
        return pending.resolve(undefined)
      case "Failed":
        return pending.reject(new Error(reply.message))
      default:
        return pending.reject(new Error(`the PGlite worker answered ${reply._tag} out of turn`))
    }
  }

  #onExit(code: number): void {
    const lost = this.#lost ??= new Error(`the PGlite worker stopped (exit code ${code})`)
    for (const pending of this.#pending.splice(0)) pending.reject(lost)
    if (this.#closing === undefined) this.#onLost(lost)
  }
}

const ignore = (): void => {}

const describe = (error: unknown): string => error instanceof Error ? error.message : String(error)

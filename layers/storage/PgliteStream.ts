/**
 * An in-process PostgreSQL wire-protocol connection to a PGlite instance: a `Duplex` to hand to `@effect/sql-pg`'s
 * `stream` option, so PGlite and PostgreSQL share one driver. It frames what the client writes, answers the
 * pre-startup requests itself and feeds PGlite whole batches; it never looks inside SQL or results.
 */
import type { PGliteInterface } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

/** The part of PGlite the bridge uses. PGlite runs one session, so every call goes through `runExclusive`. */
export type PgliteProtocol = Pick<PGliteInterface, "execProtocolRawStream" | "runExclusive" | "closed">

/**
 * Opens a new connection to `db`. Every connection speaks to the same single PGlite session: on startup the session
 * is reset (open transaction rolled back, `DISCARD ALL`) so a reconnect does not inherit the last client's state,
 * then the startup packet's settings (`search_path`, `application_name`, ...) are applied, which PGlite itself
 * ignores.
 */
export const make = (db: PgliteProtocol): Duplex => new PgliteStream(db)

const PROTOCOL_3 = 196608
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102

/** Message types that end a batch: the backend answers up to here without waiting for more input. */
const SYNC = 0x53
const QUERY = 0x51
const FLUSH = 0x48
const TERMINATE = 0x58
const ERROR_RESPONSE = 0x45

/** Startup parameters that describe the connection rather than set a session variable. */
const connectionParameters = new Set(["user", "database", "options", "replication", "client_encoding"])

class PgliteStream extends Duplex {
  readonly #db: PgliteProtocol
  /** Bytes received but not yet framed into a whole message. */
  #inbox: Buffer = Buffer.alloc(0)
  /** Whole messages waiting for the end of their batch. */
  #batch: Array<Buffer> = []
  #started = false
  #ended = false

  constructor(db: PgliteProtocol) {
    // Once the bridge has ended its side, the connection closes as a server's socket would: a client waiting for
    // `close` (the driver's cancel request does) must not wait for its own timeout.
    super({ allowHalfOpen: false })
    this.#db = db
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // Holding the callback until PGlite has answered keeps batches in order: Node calls `_write` one at a time.
    this.#receive(chunk).then(() => callback(), callback)
  }

  /** What the client wrote while PGlite was busy arrives here at once, and goes to PGlite in one call. */
  override _writev(
    chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void
  ): void {
    this.#receive(Buffer.concat(chunks.map(({ chunk }) => chunk))).then(() => callback(), callback)
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#finish()
    callback()
  }

  async #receive(chunk: Buffer): Promise<void> {
    if (this.#ended) return
    this.#inbox = this.#inbox.length === 0 ? chunk : Buffer.concat([this.#inbox, chunk])
    while (!this.#ended && !this.#started) {
      const message = this.#takeStartupMessage()
      if (message === undefined) return
      await this.#onStartupMessage(message)
    }
    if (!this.#ended) await this.#onMessages()
  }

  /** Before startup, messages are `int32 length, int32 code, ...` with no type byte. */
  #takeStartupMessage(): Buffer | undefined {
    if (this.#inbox.length < 8) return undefined
    return this.#take(this.#inbox.readInt32BE(0))
  }

  /** After startup, messages are `byte type, int32 length (self-inclusive), ...`. */
  #takeMessage(): Buffer | undefined {
    if (this.#inbox.length < 5) return undefined
    return this.#take(this.#inbox.readInt32BE(1) + 1)
  }

  #take(size: number): Buffer | undefined {
    if (size < 5) throw new Error(`PgliteStream: invalid message length ${size}`)
    if (this.#inbox.length < size) return undefined
    const message = this.#inbox.subarray(0, size)
    this.#inbox = this.#inbox.subarray(size)
    return message
  }

  async #onStartupMessage(message: Buffer): Promise<void> {
    const code = message.readInt32BE(4)
    switch (code) {
      case SSL_REQUEST:
      case GSSENC_REQUEST:
        this.push(Buffer.from("N"))
        return
      case CANCEL_REQUEST:
        // PGlite cannot stop a running statement (on the event loop it has ended before a cancel arrives; on a worker
        // it runs to its end): answer as a server does, by closing the connection, and let the client drain it.
        return this.#finish()
      case PROTOCOL_3:
        return this.#startup(message)
      default:
        this.push(errorResponse("FATAL", "0A000", `unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`))
        return this.#finish()
    }
  }

  async #startup(packet: Buffer): Promise<void> {
    const settings = [...parseStartupParameters(packet)].filter(([name]) => !connectionParameters.has(name))
    const reply = await this.#exclusive(async () => {
      const greeting = await this.#exec(packet)
      await this.#exec(simpleQuery("ROLLBACK"))
      await this.#exec(simpleQuery("DISCARD ALL"))
      if (settings.length === 0) return greeting
      const applied = await this.#exec(simpleQuery(
        `SELECT ${settings.map(([name, value]) => `pg_catalog.set_config(${quote(name)}, ${quote(value)}, false)`)}`
      ))
      return findMessage(applied, ERROR_RESPONSE) ?? greeting
    })
    if (this.destroyed) return
    this.push(reply)
    if (reply[0] === ERROR_RESPONSE) return this.#finish()
    this.#started = true
  }

  /**
   * Frames what has arrived and hands PGlite every whole batch in one call: a client that pipelines (the driver does
   * with `multiplex`) gets all its cycles run back to back, which matters when each call is a trip to another thread.
   * PGlite answers each cycle up to its own `Sync` as a server would, an error skipping only the rest of its cycle.
   * Messages after the last batch end wait for the rest of their batch.
   */
  async #onMessages(): Promise<void> {
    let whole = 0
    let terminated = false
    for (let message = this.#takeMessage(); message !== undefined; message = this.#takeMessage()) {
      const type = message[0]
      if (type === TERMINATE) {
        terminated = true
        break
      }
      this.#batch.push(message)
      if (type === SYNC || type === QUERY || type === FLUSH) whole = this.#batch.length
    }
    if (whole > 0) {
      const batch = Buffer.concat(this.#batch.slice(0, whole))
      this.#batch = this.#batch.slice(whole)
      const reply = await this.#exclusive(() => this.#exec(batch))
      if (!this.destroyed && reply.length > 0) this.push(reply)
    }
    if (terminated) this.#finish()
  }

  /** Runs `f` while no other connection can reach the session; fails once PGlite is closed. */
  #exclusive<A>(f: () => Promise<A>): Promise<A> {
    if (this.#db.closed) return Promise.reject(new Error("PgliteStream: PGlite is closed"))
    return this.#db.runExclusive(f)
  }

  /** Only for use inside `#exclusive`. The chunks PGlite hands out may be views of its memory: copy them. */
  async #exec(message: Uint8Array): Promise<Buffer> {
    const chunks: Array<Buffer> = []
    await this.#db.execProtocolRawStream(message, { onRawData: (data) => chunks.push(Buffer.from(data)) })
    return Buffer.concat(chunks)
  }

  #finish(): void {
    if (this.#ended) return
    this.#ended = true
    this.#batch = []
    this.#inbox = Buffer.alloc(0)
    this.push(null)
    // As a socket does on end of input: with nothing left unread, `end` (and so `close`) follows even for a client
    // that never reads, such as one that only sends a cancel request.
    this.read(0)
  }
}

const parseStartupParameters = (packet: Buffer): Map<string, string> => {
  const parameters = new Map<string, string>()
  const fields = packet.toString("utf8", 8).split("\0")
  for (let index = 0; index + 1 < fields.length && fields[index] !== ""; index += 2) {
    parameters.set(fields[index]!, fields[index + 1]!)
  }
  return parameters
}

/** A string literal; `standard_conforming_strings` is on in PGlite, so only quotes need doubling. */
const quote = (value: string): string => `'${value.replaceAll("'", "''")}'`

const simpleQuery = (sql: string): Buffer => {
  const text = Buffer.from(`${sql}\0`)
  const message = Buffer.alloc(5 + text.length)
  message[0] = QUERY
  message.writeInt32BE(4 + text.length, 1)
  text.copy(message, 5)
  return message
}

const findMessage = (messages: Buffer, type: number): Buffer | undefined => {
  for (let offset = 0; offset + 5 <= messages.length; offset += messages.readInt32BE(offset + 1) + 1) {
    if (messages[offset] === type) return messages.subarray(offset, offset + messages.readInt32BE(offset + 1) + 1)
  }
  return undefined
}

const errorResponse = (severity: string, code: string, message: string): Buffer => {
  const fields = Buffer.from(`S${severity}\0V${severity}\0C${code}\0M${message}\0\0`)
  const response = Buffer.alloc(5 + fields.length)
  response[0] = ERROR_RESPONSE
  response.writeInt32BE(4 + fields.length, 1)
  fields.copy(response, 5)
  return response
}

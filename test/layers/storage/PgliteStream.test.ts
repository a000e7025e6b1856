/**
 * The PGlite wire-protocol bridge at the byte level: startup and the requests before it, message framing across
 * and within writes, errors, session reset between connections, and the ways a connection ends.
 */
import { PGlite } from "@electric-sql/pglite"
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type { Duplex } from "node:stream"
import * as PgliteStream from "../../../layers/storage/PgliteStream.ts"
import { simpleQuery } from "../../support/PgWire.ts"

class TestPglite extends Context.Service<TestPglite, PGlite>()("test/layers/storage/TestPglite") {
  static readonly layer = Layer.effect(
    TestPglite,
    Effect.acquireRelease(Effect.promise(() => PGlite.create()), (db) => Effect.promise(() => db.close()))
  )
}

/** A client end of one bridge connection that decodes what comes back with the driver's own parser. */
interface Connection {
  readonly stream: Duplex
  /** Sends SSLRequest and returns the one-byte answer, which is not a framed message. */
  readonly requestSsl: Effect.Effect<string>
  /** Writes each chunk with its own `write` call. */
  readonly send: (...chunks: ReadonlyArray<Uint8Array>) => Effect.Effect<void>
  /** Waits for `count` more `ReadyForQuery` messages (or the end of the stream); returns what arrived meanwhile. */
  readonly untilReady: (count?: number) => Effect.Effect<ReadonlyArray<PgProtocol.BackendMessage>>
  readonly ended: Effect.Effect<void>
}

/** Opens a connection to the shared PGlite, or to `through` it (a wrapper that watches the calls). */
const connect = Effect.fnUntraced(function*(through?: (db: PGlite) => PgliteStream.PgliteProtocol) {
  const db = yield* TestPglite
  const stream = yield* Effect.acquireRelease(
    Effect.sync(() => PgliteStream.make(through === undefined ? db : through(db))),
    (stream) => Effect.sync(() => stream.destroy())
  )
  const parser = PgProtocol.makeParser()
  let inbox: Array<PgProtocol.BackendMessage> = []
  let ended = false
  let wake = (): void => {}
  let onSslAnswer: ((answer: string) => void) | undefined
  stream.on("data", (chunk: Buffer) => {
    if (onSslAnswer !== undefined) {
      onSslAnswer(chunk.toString("latin1", 0, 1))
      onSslAnswer = undefined
      chunk = chunk.subarray(1)
    }
    inbox.push(...parser.push(chunk))
    wake()
  })
  stream.on("end", () => {
    ended = true
    wake()
  })
  const readyCount = () => inbox.filter((message) => message._tag === "ReadyForQuery").length
  const connection: Connection = {
    stream,
    requestSsl: Effect.callback<string>((resume) => {
      onSslAnswer = (answer) => resume(Effect.succeed(answer))
      stream.write(PgProtocol.encodeSslRequest())
    }),
    send: (...chunks) => Effect.sync(() => chunks.forEach((chunk) => stream.write(chunk))),
    untilReady: (count = 1) =>
      Effect.callback<ReadonlyArray<PgProtocol.BackendMessage>>((resume) => {
        wake = () => {
          if (!ended && readyCount() < count) return
          const received = inbox
          inbox = []
          wake = () => {}
          resume(Effect.succeed(received))
        }
        wake()
      }),
    ended: Effect.callback<void>((resume) => {
      if (ended) return resume(Effect.void)
      stream.once("end", () => resume(Effect.void))
    })
  }
  return connection
})

const open = connect()

/** Records the first byte of every message batch the bridge hands PGlite. */
const recordingCalls = (calls: Array<string>) => (db: PGlite): PgliteStream.PgliteProtocol => ({
  get closed() {
    return db.closed
  },
  runExclusive: (f) => db.runExclusive(f),
  execProtocolRawStream: (message, options = { onRawData: () => {} }) => {
    calls.push(String.fromCharCode(message[0]!))
    return db.execProtocolRawStream(message, options)
  }
})

const startup = (parameters: Record<string, string> = {}) =>
  PgProtocol.encodeStartupMessage({ user: "postgres", database: "postgres", ...parameters })

/** An extended-query cycle for `sql` with text parameters, as one buffer. */
const extended = (sql: string, ...parameters: ReadonlyArray<string>): Uint8Array =>
  Buffer.concat([
    Result.getOrThrow(PgProtocol.encodeParse({ name: "", query: sql, parameterTypes: parameters.map(() => 25) })),
    Result.getOrThrow(PgProtocol.encodeBind({
      portal: "",
      statement: "",
      parameters: parameters.map((parameter) => Buffer.from(parameter))
    })),
    PgProtocol.encodeDescribe({ target: "portal", name: "" }),
    PgProtocol.encodeExecute({ portal: "", maxRows: 0 }),
    PgProtocol.encodeSync()
  ])

const tags = (messages: ReadonlyArray<PgProtocol.BackendMessage>) => messages.map((message) => message._tag)

/** Text of the first column of each `DataRow`. */
const texts = (messages: ReadonlyArray<PgProtocol.BackendMessage>) =>
  messages.flatMap((message) =>
    message._tag === "DataRow" && message.values[0] != null ? [Buffer.from(message.values[0]).toString()] : []
  )

const lastStatus = (messages: ReadonlyArray<PgProtocol.BackendMessage>) =>
  messages.findLast((message) => message._tag === "ReadyForQuery")

/** Only PGlite is under test here, so the PostgreSQL tier skips the file. */
const pgliteTier = (process.env["ENGRAM_TEST_DATABASE"] ?? "pglite") === "pglite"

describe.runIf(pgliteTier)("PgliteStream", () => {
  layer(TestPglite.layer, { timeout: "60 seconds" })((it) => {
    it.effect("answers SSLRequest with N and applies the startup settings PGlite ignores", () =>
      Effect.gen(function*() {
        const connection = yield* open
        assert.strictEqual(yield* connection.requestSsl, "N")
        const packet = startup({ search_path: "\"tenant's\", public", application_name: "bridge-test" })
        yield* connection.send(packet.subarray(0, 3), packet.subarray(3, 10), packet.subarray(10))
        const greeting = yield* connection.untilReady()
        assert.includeMembers(tags(greeting), ["AuthenticationOk", "BackendKeyData", "ReadyForQuery"])
        yield* connection.send(simpleQuery("SHOW search_path; SHOW application_name"))
        assert.deepStrictEqual(texts(yield* connection.untilReady()), ["\"tenant's\", public", "bridge-test"])
      }))

    it.effect("frames messages split across writes and several messages in one write", () =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const connection = yield* connect(recordingCalls(calls))
        const cycle = extended("SELECT $1::text || '!' AS shout", "hi")
        // Startup and the whole first cycle, one byte per write.
        const bytes = Buffer.concat([startup(), cycle])
        yield* connection.send(...Array.from(bytes, (byte) => Uint8Array.of(byte)))
        const first = yield* connection.untilReady(2)
        assert.deepStrictEqual(tags(first).slice(-6), [
          "ParseComplete",
          "BindComplete",
          "RowDescription",
          "DataRow",
          "CommandComplete",
          "ReadyForQuery"
        ])
        assert.deepStrictEqual(texts(first), ["hi!"])
        yield* connection.send(Buffer.concat([extended("SELECT $1::text", "a"), simpleQuery("SELECT 'b'"), cycle]))
        assert.deepStrictEqual(texts(yield* connection.untilReady(3)), ["a", "b", "hi!"])
        // A write that ends inside a cycle: the whole ones run, the rest waits for its Sync.
        const split = Buffer.concat([extended("SELECT $1::text", "c"), extended("SELECT $1::text", "d")])
        const cut = split.length - 7
        yield* connection.send(split.subarray(0, cut))
        assert.deepStrictEqual(texts(yield* connection.untilReady()), ["c"])
        yield* connection.send(split.subarray(cut))
        assert.deepStrictEqual(texts(yield* connection.untilReady()), ["d"])
        // The startup packet, the two statements that reset the session, then one call per write for the whole
        // batches it completes (Parse through the last Sync).
        assert.deepStrictEqual(calls, ["\0", "Q", "Q", "P", "P", "P", "P"])
      }))

    it.effect("answers SQL errors with ErrorResponse and keeps the session", () =>
      Effect.gen(function*() {
        const connection = yield* open
        yield* connection.send(startup())
        yield* connection.untilReady()
        yield* connection.send(extended("SELEC 1"))
        const failed = yield* connection.untilReady()
        assert.deepStrictEqual(tags(failed), ["ErrorResponse", "ReadyForQuery"])
        yield* connection.send(simpleQuery("BEGIN"), extended("SELECT 1/0"), extended("SELECT 1"))
        const aborted = yield* connection.untilReady(3)
        assert.deepStrictEqual(lastStatus(aborted), { _tag: "ReadyForQuery", status: "E" })
        assert.strictEqual(tags(aborted).filter((tag) => tag === "ErrorResponse").length, 2)
        yield* connection.send(simpleQuery("ROLLBACK"), extended("SELECT $1::text", "fine"))
        const recovered = yield* connection.untilReady(2)
        assert.deepStrictEqual(texts(recovered), ["fine"])
        assert.deepStrictEqual(lastStatus(recovered), { _tag: "ReadyForQuery", status: "I" })
      }))

    it.effect("starts each connection on a clean session", () =>
      Effect.gen(function*() {
        const first = yield* open
        yield* first.send(startup(), simpleQuery("CREATE TABLE IF NOT EXISTS handover (note text)"))
        yield* first.untilReady(2)
        yield* first.send(simpleQuery("BEGIN; INSERT INTO handover VALUES ('uncommitted'); SET search_path = nowhere"))
        assert.deepStrictEqual(lastStatus(yield* first.untilReady()), { _tag: "ReadyForQuery", status: "T" })
        // The client goes away mid-transaction, as a crashed connection would.
        first.stream.destroy()
        const second = yield* open
        yield* second.send(startup(), simpleQuery("SELECT count(*)::text FROM public.handover; SHOW search_path"))
        const messages = yield* second.untilReady(2)
        assert.deepStrictEqual(texts(messages), ["0", "public"])
        assert.deepStrictEqual(lastStatus(messages), { _tag: "ReadyForQuery", status: "I" })
      }))

    it.effect("refuses a startup setting PostgreSQL does not know", () =>
      Effect.gen(function*() {
        const connection = yield* open
        yield* connection.send(startup({ no_such_setting: "1" }))
        const messages = yield* connection.untilReady()
        assert.deepStrictEqual(tags(messages), ["ErrorResponse"])
        yield* connection.ended
      }))

    it.effect("ends the connection on Terminate and on CancelRequest", () =>
      Effect.gen(function*() {
        const session = yield* open
        yield* session.send(startup())
        yield* session.untilReady()
        yield* session.send(PgProtocol.encodeTerminate())
        yield* session.ended
        assert.isTrue(session.stream.readableEnded)
        // Once ended, the wait returns at once with what arrived after the start-up: nothing answers a Terminate.
        assert.deepStrictEqual(yield* session.untilReady(), [])
        const cancel = yield* open
        yield* cancel.send(PgProtocol.encodeCancelRequest({ pid: 1, secret: 2 }))
        yield* cancel.ended
        assert.isTrue(cancel.stream.readableEnded)
        assert.deepStrictEqual(yield* cancel.untilReady(), [], "a cancel request gets no answer, as on a server")
      }))

    it.effect("closes a cancel-request connection whose client never reads, as a server's socket closes", () =>
      Effect.gen(function*() {
        const db = yield* TestPglite
        const stream = PgliteStream.make(db)
        // The driver sends its cancel this way and waits for `close` (or its own 5 s timeout).
        yield* Effect.callback<void>((resume) => {
          stream.once("close", () => resume(Effect.void))
          stream.write(PgProtocol.encodeCancelRequest({ pid: 1, secret: 2 }))
        })
        assert.isTrue(stream.destroyed)
      }))
  })
})

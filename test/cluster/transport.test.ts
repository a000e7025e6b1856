/**
 * The cluster port answers only nodes holding SERVICE_API_CLUSTER_SECRET: a raw TCP peer that sends the cluster's
 * own RPC frames, garbage or nothing at all is dropped without an answer and changes no bank; a node with another
 * secret cannot reach a runner; a cluster node refuses to start without a secret, and says so without echoing one;
 * a runner whose secret differs from the running runners' refuses to start (it could otherwise take their shards).
 * The start-up checks run on both tiers; the rest needs PostgreSQL (a cluster needs a database every process shares).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { RunnerAddress, Runners } from "effect/cluster"
import { RpcClient, RpcMessage, RpcSerialization } from "effect/rpc"
import { mkdtempSync } from "node:fs"
import { connect as connectTcp } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect as connectTls } from "node:tls"
import * as ClusterTransport from "../../layers/cluster/ClusterTransport.ts"
import { freePort, spawnService } from "../support/ChildService.ts"
import { clusterSecret, makeCluster, request, until } from "../support/ClusterNodes.ts"
import { databaseTier } from "../support/TestDatabase.ts"

const refusesToStart = (secret: string | undefined) =>
  Effect.gen(function*() {
    const child = yield* spawnService("src/main.ts", {
      SERVICE_API_CLUSTER_MODE: "runner",
      // Any PostgreSQL URL: the configuration is refused before a connection is tried.
      SERVICE_API_DATABASE_URL: "postgres://engram:engram@127.0.0.1:5432/engram_test",
      SERVICE_API_PORT: String(yield* freePort),
      SERVICE_API_DATA_DIR: mkdtempSync(join(tmpdir(), "engram-cluster-")),
      ...(secret === undefined ? {} : { SERVICE_API_CLUSTER_SECRET: secret })
    })
    const code = yield* Effect.promise(() => child.exited)
    assert.notStrictEqual(code, 0)
    return child.output()
  })

describe("cluster secret at start-up", () => {
  it.live(
    "a runner without SERVICE_API_CLUSTER_SECRET refuses to start and says which variable to set",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const output = yield* refusesToStart(undefined)
        assert.include(output, "SERVICE_API_CLUSTER_MODE=runner requires SERVICE_API_CLUSTER_SECRET")
      })),
    60_000
  )

  it.live(
    "a secret shorter than 16 characters is refused without being echoed",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const short = "quince-1234567"
        const output = yield* refusesToStart(short)
        assert.include(output, "SERVICE_API_CLUSTER_SECRET must be at least 16 characters")
        assert.notInclude(output, short)
      })),
    60_000
  )
})

/** One frame of the cluster's own wire format (effect/rpc SchemaBinary), as a peer would send it. */
const frames = Effect.gen(function*() {
  const serialization = yield* RpcSerialization.RpcSerialization
  const parser = serialization.makeUnsafe()
  return {
    ping: parser.encode(RpcMessage.constPing) as Uint8Array,
    // Shaped like a runner's bank message: a request for the runner RPC `Notify` with an opaque payload.
    notify: parser.encode({
      _tag: "Request",
      id: "1",
      tag: "Notify",
      payload: new Uint8Array([1, 2, 3, 4]),
      headers: []
    }) as Uint8Array,
    decode: (bytes: Uint8Array) => parser.decode(bytes) as ReadonlyArray<{ readonly _tag: string }>
  }
}).pipe(Effect.provide(RpcSerialization.layerSchemaBinary()))

/** Sends `chunks` over plain TCP; resolves with what came back and whether the runner closed the socket in 8 s. */
const rawExchange = (port: number, chunks: ReadonlyArray<Uint8Array>) =>
  Effect.promise(() =>
    new Promise<{ received: Buffer; closed: boolean }>((resolve) => {
      const received: Array<Buffer> = []
      const socket = connectTcp({ host: "127.0.0.1", port }, () => {
        for (const chunk of chunks) socket.write(chunk)
      })
      const settle = (closed: boolean) => {
        clearTimeout(deadline)
        socket.destroy()
        resolve({ received: Buffer.concat(received), closed })
      }
      const deadline = setTimeout(() => settle(false), 8_000)
      socket.on("data", (data) => received.push(data))
      socket.on("error", () => {}) // a reset is one way of being dropped
      socket.on("close", () => settle(true))
    })
  )

/** Sends `chunk` over TLS keyed by `secret`; resolves with the first bytes the runner answers. */
const authenticatedExchange = (port: number, secret: string, chunk: Uint8Array) =>
  Effect.promise(() =>
    new Promise<Buffer>((resolve, reject) => {
      const key = ClusterTransport.clusterPresharedKey(Redacted.make(secret))
      const socket = connectTls({
        host: "127.0.0.1",
        port,
        minVersion: "TLSv1.3",
        ciphers: "TLS_AES_128_GCM_SHA256",
        pskCallback: () => ({ psk: key, identity: "engram-cluster" }),
        checkServerIdentity: () => undefined
      }, () => socket.write(chunk))
      socket.once("data", (data) => {
        socket.destroy()
        resolve(data)
      })
      socket.on("error", reject)
    })
  )

/** A runner-to-runner `Ping` RPC dialled through the cluster transport with `secret`. */
const pingWithSecret = (port: number, secret: string) =>
  Effect.gen(function*() {
    const protocols = yield* Runners.RpcClientProtocol
    const protocol = yield* protocols.make(RunnerAddress.make("127.0.0.1", port))
    const client = yield* Runners.makeRpcClient.pipe(Effect.provideService(RpcClient.Protocol, protocol))
    return yield* client.Ping().pipe(Effect.timeout("10 seconds"))
  }).pipe(
    Effect.scoped,
    Effect.provide(
      ClusterTransport.layerClientProtocol(Redacted.make(secret)).pipe(
        Layer.provide(RpcSerialization.layerSchemaBinary())
      )
    )
  )

const bankState = (url: string, bank: string) =>
  Effect.gen(function*() {
    const memories = yield* request(`${url}/v1/default/banks/${bank}/memories/list?limit=100`, "GET")
    const operations = yield* request(`${url}/v1/default/banks/${bank}/operations`, "GET")
    const banks = yield* request(`${url}/v1/default/banks`, "GET")
    return { memories: memories.body, operations: operations.body, banks: banks.body }
  })

describe.skipIf(databaseTier === "pglite")("authenticated cluster transport", () => {
  it.live(
    "a peer without the secret is dropped before its bytes are read; a node with another secret cannot talk",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const cluster = makeCluster(databaseTier, 6)
        const runner = yield* cluster.start("runner")
        const bank = `${runner.url}/v1/default/banks/hedgerow`
        assert.isBelow((yield* request(bank, "PUT", { name: "hedgerow" })).status, 300)
        const retained = yield* request(`${bank}/memories`, "POST", {
          items: [{ content: "Ansel laid the hawthorn hedge." }]
        })
        assert.strictEqual(retained.status, 200, JSON.stringify(retained.body))
        const before = yield* bankState(runner.url, "hedgerow")

        // Control: with the secret, the runner's RPC server answers a protocol Ping with a Pong.
        const wire = yield* frames
        const answer = yield* authenticatedExchange(runner.clusterPort, clusterSecret, wire.ping)
        assert.deepStrictEqual(wire.decode(answer).map((message) => message._tag), ["Pong"])

        // Without it, the same frames, an envelope-shaped request, garbage or silence get no answer: at most a TLS
        // alert record (content type 21), and the socket is closed (a silent one after the 5 s handshake timeout).
        const garbage = new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n")
        for (const chunks of [[wire.ping], [wire.notify, wire.ping], [garbage], []]) {
          const { closed, received } = yield* rawExchange(runner.clusterPort, chunks)
          assert.isTrue(received.length === 0 || received[0] === 21, `answered ${received.toString("hex")}`)
          assert.isTrue(closed, "the runner kept an unauthenticated socket open")
        }

        // A node dialling with another secret fails the handshake; the right secret reaches the runner.
        const wrong = yield* Effect.exit(pingWithSecret(runner.clusterPort, "another-cluster-secret-0000"))
        assert.isTrue(Exit.isFailure(wrong), "a Ping with the wrong secret must fail")
        assert.notInclude(String(wrong), "TimeoutError", "refused by the handshake, not left hanging")
        yield* pingWithSecret(runner.clusterPort, clusterSecret)

        // Nothing the unauthenticated peers sent reached any bank, and the runner still serves.
        assert.deepStrictEqual(yield* bankState(runner.url, "hedgerow"), before)
        assert.notInclude(runner.child.output(), "Unhandled error in SocketServer")

        // A whole node started with another secret: what it writes to the shared database is its own (it holds the
        // database's credentials), but its messages never reach the runner, and its log says what to fix.
        const otherSecret = "another-cluster-secret-0000"
        const stranger = yield* cluster.start("client", { SERVICE_API_CLUSTER_SECRET: otherSecret })
        const strangerBank = `${stranger.url}/v1/default/banks/coppice`
        assert.isBelow((yield* request(strangerBank, "PUT", { name: "coppice" })).status, 300)
        const queued = yield* request(`${strangerBank}/memories`, "POST", {
          async: true,
          items: [{ content: "Hazel cut." }]
        })
        assert.strictEqual(queued.status, 200, JSON.stringify(queued.body))
        const explanation = "every node of a cluster needs the same SERVICE_API_CLUSTER_SECRET"
        yield* until(
          "the stranger explains its refused handshake",
          async () => stranger.child.output().includes(explanation) ? true : undefined,
          30_000,
          stranger.child
        )
        assert.notInclude(runner.child.output(), "bank coppice is hosted", "its wake-up never reached the runner")
        for (const output of [stranger.child.output(), runner.child.output()]) {
          assert.notInclude(output, otherSecret)
          assert.notInclude(output, clusterSecret)
        }
      })),
    180_000
  )

  it.live(
    "a runner started with another secret than the running one refuses to start, naming the variable",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const cluster = makeCluster(databaseTier, 4)
        const runner = yield* cluster.start("runner")
        const otherSecret = "another-cluster-secret-1111"
        const stranger = yield* cluster.spawn("runner", { SERVICE_API_CLUSTER_SECRET: otherSecret })
        const code = yield* Effect.promise(() => stranger.child.exited)
        assert.notStrictEqual(code, 0, "the runner with another secret started")
        const output = stranger.child.output()
        assert.include(output, "every node of a cluster needs the same secret")
        assert.include(output, "SERVICE_API_CLUSTER_SECRET")
        assert.notInclude(output, otherSecret)
        assert.notInclude(output, clusterSecret)
        // The running runner kept serving, and a second runner with the same secret still joins.
        const bank = `${runner.url}/v1/default/banks/holly`
        assert.isBelow((yield* request(bank, "PUT", { name: "holly" })).status, 300)
        yield* cluster.start("runner")
      })),
    180_000
  )
})

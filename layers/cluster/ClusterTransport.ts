/**
 * The sockets between cluster nodes (effect/cluster's runner-to-runner RPC and the runner health pings) as TLS 1.3
 * keyed by a pre-shared key derived from SERVICE_API_CLUSTER_SECRET. A peer without the secret fails the handshake
 * — its first message carries a PSK binder that does not verify — and is dropped by node:tls before a byte it sent
 * reaches the cluster's deserialiser. Replaces the plain TCP layers of `NodeClusterSocket`; never build it without
 * a secret (the configuration refuses to start a cluster node without one).
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Effect, Layer, Option, Redacted } from "effect"
import { type RunnerAddress, Runners, ShardingConfig } from "effect/cluster"
import { RpcClient, RpcSerialization } from "effect/rpc"
import { Socket } from "effect/socket"
import { hkdfSync } from "node:crypto"

/** Every node presents this identity; the key, not the name, is what authenticates it. */
const pskIdentity = "engram-cluster"

/**
 * TLS 1.3 only, with its SHA-256 suites: OpenSSL binds a key handed over by Node's `pskCallback` to SHA-256, so
 * `TLS_AES_256_GCM_SHA384` fails every handshake (measured on Node 24 / OpenSSL 3.5). The handshake still runs an
 * (EC)DHE exchange, so traffic recorded today stays unreadable to someone who learns the secret later.
 */
const tlsProtocol = {
  minVersion: "TLSv1.3",
  ciphers: "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"
} as const

/** A peer that opens a socket and stays silent is dropped after this long, not after Node's 120 s default. */
const handshakeTimeoutMs = 5_000

/**
 * The 32-byte key both ends derive from the shared secret. HKDF rather than the secret itself: the key has full
 * length whatever the secret's, and a key of this transport is useless anywhere else the secret might be reused.
 */
export const clusterPresharedKey = (secret: Redacted.Redacted<string>): Buffer =>
  Buffer.from(hkdfSync("sha256", Redacted.value(secret), "engram", "engram cluster transport psk v1", 32))

/**
 * A handshake the other node refuses is almost always a node started with another secret (or an old node without
 * TLS); effect/cluster only sees an unavailable runner, so say what to check. Names the variable, never its value.
 */
const explainRefusedHandshake = (address: RunnerAddress.RunnerAddress) => (error: Socket.SocketError) => {
  const cause = error.reason._tag === "SocketOpenError" ? error.reason.cause : undefined
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return typeof code === "string" && code.startsWith("ERR_SSL")
    ? Effect.logWarning(
      `the TLS handshake with the cluster node at ${address.host}:${address.port} failed (${code}): ` +
        "every node of a cluster needs the same SERVICE_API_CLUSTER_SECRET"
    )
    : Effect.void
}

/** The listening side: only peers that complete the PSK handshake reach effect/cluster's socket runner. */
export const layerSocketServer = (secret: Redacted.Redacted<string>) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* ShardingConfig.ShardingConfig
    const listen = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
    if (Option.isNone(listen)) return yield* Effect.die("the cluster socket server needs a runner listen address")
    const key = clusterPresharedKey(secret)
    return NodeSocketServer.layerTls({
      ...tlsProtocol,
      host: listen.value.host,
      port: listen.value.port,
      handshakeTimeout: handshakeTimeoutMs,
      pskCallback: (_socket, identity) => identity === pskIdentity ? key : null
    })
  }))

/**
 * The dialling side, for bank messages and health pings alike. The timeouts are those of `NodeClusterSocket`'s
 * TCP client, which the cluster's health checks were tuned against; the open timeout now covers the handshake.
 */
export const layerClientProtocol = (secret: Redacted.Redacted<string>): Layer.Layer<
  Runners.RpcClientProtocol,
  never,
  RpcSerialization.RpcSerialization
> =>
  Layer.effect(Runners.RpcClientProtocol)(Effect.gen(function*() {
    const serialization = yield* RpcSerialization.RpcSerialization
    const key = clusterPresharedKey(secret)
    return {
      codecFor: serialization.codecFor,
      make: Effect.fnUntraced(function*(address) {
        const socket = yield* NodeSocket.makeTls({
          ...tlsProtocol,
          host: address.host,
          port: address.port,
          openTimeout: 1000,
          timeout: 5500,
          pskCallback: () => ({ psk: key, identity: pskIdentity }),
          // A PSK handshake carries no certificate: the key is the server's identity.
          checkServerIdentity: () => undefined
        })
        const explained = Socket.make({
          reader: Effect.tapError(socket.reader, explainRefusedHandshake(address)),
          writer: socket.writer
        })
        return yield* RpcClient.makeProtocolSocket().pipe(
          Effect.provideService(Socket.Socket, explained),
          Effect.provideService(RpcSerialization.RpcSerialization, serialization)
        )
      }, Effect.orDie)
    }
  }))

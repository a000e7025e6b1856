/** Starts engram (or a fixture around it) as a separate Node process, so tests can kill it for real. */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type Server } from "node:net"
import { Effect } from "effect"
import type { Scope } from "effect"
import { eventuallyAsync } from "./Eventually.ts"

/**
 * `count` distinct free ports: each is held open until all are found, since a port closed at once can be handed out
 * again by the next ask (a cluster node once got the same port for its HTTP server and its runner).
 */
export const freePorts = (count: number) =>
  Effect.promise(async () => {
    const servers = await Promise.all(Array.from({ length: count }, () =>
      new Promise<Server>((resolve) => {
        const server = createServer()
        server.listen(0, "127.0.0.1", () => resolve(server))
      })))
    const ports = servers.map((server) => {
      const address = server.address()
      return typeof address === "object" && address !== null ? address.port : 0
    })
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    return ports
  })

export const freePort = Effect.map(freePorts(1), (ports) => ports[0]!)

export interface Child {
  readonly process: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

export const spawnService = (script: string, env: Record<string, string>, args: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.sync((): Child => {
      const child = spawn(process.execPath, [script, ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout?.on("data", (chunk) => (output += chunk))
      child.stderr?.on("data", (chunk) => (output += chunk))
      // "close", not "exit": the exit can be seen before the last of the child's output is read, and a test that
      // reads what a refused start printed would see it cut short.
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      return { process: child, output: () => output, exited }
    }),
    (child) => Effect.sync(() => child.process.exitCode === null && child.process.kill("SIGKILL"))
  )

/**
 * Waits up to three minutes for `/health` to answer 200; fails at once, with the child's output, if it exits first.
 * A fresh server answers in seconds on a quiet machine, but a start (PGlite's WebAssembly compiled, migrations,
 * the GloVe table opened) took up to 187 s on this 2-core machine at load 30: the wait is a deadline, not a target.
 */
export const waitForHealth = (url: string, child: Child) =>
  eventuallyAsync(
    async () => {
      if (child.process.exitCode !== null) return "exited" as const
      // Refused until the child listens; each attempt has its own deadline, so one unanswered request cannot use up
      // the whole wait.
      return fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) }).then(
        (response) => response.ok ? "healthy" as const : "starting" as const,
        () => "starting" as const
      )
    },
    (state) => state !== "starting",
    "3 minutes",
    { what: "the service healthy", interval: "100 millis", context: child.output }
  ).pipe(Effect.flatMap((state) =>
    state === "exited" ? Effect.die(new Error(`service exited early:\n${child.output()}`)) : Effect.void
  ))

/** A service started by `startService`: its URL, the first child, and how to start it again on the same port and data. */
export interface StartedService {
  readonly url: string
  readonly first: Child
  /** Starts the service again (after a kill) and waits for its health. */
  readonly restart: Effect.Effect<Child, never, Scope.Scope>
}

/**
 * The kill tests' prelude: engram (`src/main.ts`) with `env` on a free port, started and healthy. Every child it
 * or `restart` starts is killed when the scope closes.
 */
export const startService = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const withPort = { ...env, SERVICE_API_PORT: String(yield* freePort) }
    const url = `http://127.0.0.1:${withPort.SERVICE_API_PORT}`
    const restart = Effect.tap(spawnService("src/main.ts", withPort), (child) => waitForHealth(url, child))
    const first = yield* restart
    return { url, first, restart } satisfies StartedService
  })

/** Kills the child with SIGKILL and waits until it has exited. */
export const killHard = (child: Child) =>
  Effect.promise(() => {
    child.process.kill("SIGKILL")
    return child.exited
  })

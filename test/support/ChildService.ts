/** Starts engram (or a fixture around it) as a separate Node process, so tests can kill it for real. */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { Effect } from "effect"

export const freePort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
)

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
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      return { process: child, output: () => output, exited }
    }),
    (child) => Effect.sync(() => child.process.exitCode === null && child.process.kill("SIGKILL"))
  )

export const waitForHealth = (url: string, child: Child) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      if (child.process.exitCode !== null) throw new Error(`service exited early:\n${child.output()}`)
      try {
        const response = await fetch(`${url}/health`)
        if (response.ok) return
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`service did not become healthy:\n${child.output()}`)
  })

/** Runs the `engram` CLI (bin/engram.mjs) as a child process and collects its exit code, stdout and stderr. */
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import { Effect } from "effect"

export const cliBin = resolve(import.meta.dirname, "../../bin/engram.mjs")

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<CliRun>((done, fail) => {
      const child = spawn(process.execPath, [cliBin, ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("error", fail)
      child.on("close", (code) => done({ code, stdout, stderr }))
    })
  )

/** The run's stdout as JSON; a failure message shows everything the CLI printed. */
export const parsedJson = (run: CliRun): any => {
  try {
    return JSON.parse(run.stdout)
  } catch (error) {
    throw new Error(`stdout is not JSON (${(error as Error).message}):\n${run.stdout}\nstderr:\n${run.stderr}`)
  }
}

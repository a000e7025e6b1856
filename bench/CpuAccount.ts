/**
 * Where the CPU went during a bench window, from /proc (Linux only): seconds used by each named process and by
 * all PostgreSQL processes together (every session on the server, other users' too: read it as an upper bound),
 * against what the machine's cores could give. Measurement only; it changes nothing it measures.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { cpus } from "node:os"

const ticksPerSecond = 100

/** utime + stime (+ the waited-for children's, so exited PostgreSQL backends still count via the postmaster). */
const processTicks = (pid: number, withChildren = false) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const own = Number(fields[11]) + Number(fields[12])
    return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own
  } catch {
    return 0
  }
}

const postgresTicks = () => {
  const pids = execFileSync("ps", ["-u", "postgres", "-o", "pid="], { encoding: "utf8" }).split("\n").map(Number)
    .filter((pid) => pid > 0)
  // The postmaster (lowest pid) also carries its exited backends' time.
  const postmaster = Math.min(...pids)
  return pids.reduce((sum, pid) => sum + processTicks(pid, pid === postmaster), 0)
}

const machineBusyTicks = () => {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1).map(Number)
  const idle = (line[3] ?? 0) + (line[4] ?? 0)
  return line.reduce((a, b) => a + b, 0) - idle
}

export interface CpuSnapshot {
  readonly at: number
  readonly processes: ReadonlyMap<string, number>
  readonly postgres: number
  readonly machine: number
}

export const snapshot = (processes: ReadonlyMap<string, number>): CpuSnapshot => ({
  at: performance.now(),
  processes: new Map([...processes].map(([name, pid]) => [name, processTicks(pid)])),
  postgres: postgresTicks(),
  machine: machineBusyTicks()
})

/** Core-seconds per process between two snapshots, with the machine's busy share and capacity. */
export const usage = (before: CpuSnapshot, after: CpuSnapshot) => {
  const seconds = (after.at - before.at) / 1000
  const used = (a: number, b: number) => Number(((b - a) / ticksPerSecond).toFixed(1))
  const perProcess: Record<string, number> = {}
  for (const [name, ticks] of after.processes) perProcess[name] = used(before.processes.get(name) ?? 0, ticks)
  return {
    wallSeconds: Number(seconds.toFixed(1)),
    coreSecondsAvailable: Number((seconds * cpus().length).toFixed(1)),
    machineBusy: used(before.machine, after.machine),
    postgresAllSessions: used(before.postgres, after.postgres),
    ...perProcess
  }
}

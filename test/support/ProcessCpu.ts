/**
 * The CPU time another process has used (user + system), read from Linux's `/proc/<pid>/stat`, so a test can
 * measure what a child spends while idle. Linux only; it measures, it never judges.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

/** Clock ticks per second of `/proc` times (`getconf CLK_TCK`; 100 on every common Linux). */
export const clockTicksPerSecond = (() => {
  try {
    const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
})()

/** Seconds of CPU (utime + stime) the process has used so far, at `/proc`'s tick resolution. */
export const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // The command name (field 2) is in parentheses and may itself hold spaces or parentheses: count from its end.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // `fields[0]` is field 3 (state), so utime (field 14) and stime (field 15) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond
}

/**
 * Background work on a worker thread (parsing code, building a vector index) gives way to the server's event loop
 * and database thread. On Linux a thread has its own nice value, set through its thread id (`/proc/thread-self` names
 * it); elsewhere the worker keeps the process's priority.
 */
import { readlinkSync } from "node:fs"
import { constants, setPriority } from "node:os"

export const lowerThreadPriority = (priority: number = constants.priority.PRIORITY_BELOW_NORMAL): void => {
  try {
    const threadId = Number(readlinkSync("/proc/thread-self").split("/").pop())
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, priority)
  } catch {
    // Not Linux, or not allowed: run at normal priority.
  }
}

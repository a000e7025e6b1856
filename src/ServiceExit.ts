/**
 * How the service process exits: a stop by SIGTERM or SIGINT (the runtime interrupts the service, which closes
 * the server and gives running operations back) is the ordinary end of a service, so it exits 0 — service
 * managers read anything else as a crash. A failure exits as Effect's runtime decides (1, or the error's code).
 */
import { Cause, Exit, Runtime } from "effect"

export const serviceTeardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

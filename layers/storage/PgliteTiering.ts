/**
 * Whether PGlite's WebAssembly may be tiered up to TurboFan. By default it stays in Liftoff, V8's baseline compiler:
 * a fresh server's PGlite then keeps about 40 MiB less resident and never reaches the 900+ MiB peak of TurboFan
 * compiling one of PostgreSQL's giant functions in its first statements. It only decides PGlite's own module: other
 * WebAssembly (tree-sitter, tesseract) is compiled later with V8's defaults.
 */
import { setFlagsFromString } from "node:v8"

/**
 * V8 decides a module's tiering when it compiles it and keeps that decision for the module's life, so the flags are
 * turned off only while PGlite compiles its module and starts, and restored once the last open in progress ends.
 * The count is per thread while the flags are per process: an open on another thread that ends first turns tier-up
 * back on for one still in progress here, which then costs memory, never correctness (a server opens PGlite once).
 */
let opening = 0

/** Node was started with its own WebAssembly tiering flags (e.g. `--liftoff-only`): those are left as given. */
const tieringChosenAtLaunch = process.execArgv.some((flag) =>
  /^--(no-)?(liftoff|wasm-tier-up|wasm-dynamic-tiering)/.test(flag)
)

/** `SERVICE_API_PGLITE_TIER_UP=true` keeps V8's default (TurboFan for hot functions), for write-heavy embedded use. */
const tierUpWanted = (): boolean => {
  const value = (process.env["SERVICE_API_PGLITE_TIER_UP"] ?? "").trim().toLowerCase()
  if (value === "" || value === "false") return false
  if (value === "true") return true
  throw new Error(`SERVICE_API_PGLITE_TIER_UP must be true or false (got "${value}")`)
}

/** Runs `open` (which compiles and starts PGlite) with WebAssembly tier-up off unless it is wanted. */
export const withoutTierUp = async <A>(open: () => Promise<A>): Promise<A> => {
  if (tierUpWanted() || tieringChosenAtLaunch) return open()
  if (opening++ === 0) setFlagsFromString("--no-wasm-dynamic-tiering --no-wasm-tier-up")
  try {
    return await open()
  } finally {
    if (--opening === 0) setFlagsFromString("--wasm-dynamic-tiering --wasm-tier-up")
  }
}

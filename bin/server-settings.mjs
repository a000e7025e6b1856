// The server's process settings, which `engram serve` and `npm start` (bin/engram.mjs) start it with. Each one is
// left alone when the user already set it (on the command line, in NODE_OPTIONS or in GLIBC_TUNABLES).
//
// - The young generation at most 2 x 16 MiB: left to grow it reached 128 MiB and stayed, and a fresh server held
//   85-130 MiB more; 1-4 MiB promoted too much under load.
// - glibc's malloc with fixed thresholds (Linux): a block of 128 KiB or more is mapped on its own and unmapped when
//   freed, and free memory at the top of a heap goes back past 128 KiB. By default glibc raises both thresholds each
//   time a large block is freed (up to 32 and 64 MiB), after which freed buffers and the compilers' scratch memory
//   stay in its heaps, one per thread that allocated them: a fresh server after one retain and one recall held
//   357-389 MiB instead of 322-326 (`node bench/memory.ts`, docs/isolation.md).

/** `glibc.malloc` tunables the server runs with unless GLIBC_TUNABLES already names them. */
export const mallocTunables = { "glibc.malloc.mmap_threshold": "131072", "glibc.malloc.trim_threshold": "131072" }

const youngGenerationFlag = "--max-semi-space-size=16"

/**
 * The node flags to add, the environment to run with, and whether either differs from this process's (then the
 * server needs a process of its own: V8 and malloc read them at start).
 */
export const serverSettings = (execArgv, env, platform) => {
  const flags = [...execArgv, env.NODE_OPTIONS ?? ""].some((flag) => flag.includes("--max-semi-space-size"))
    ? []
    : [youngGenerationFlag]
  const tunables = platform === "linux" ? withMallocTunables(env.GLIBC_TUNABLES) : env.GLIBC_TUNABLES
  const changed = flags.length > 0 || tunables !== env.GLIBC_TUNABLES
  return { flags, env: tunables === env.GLIBC_TUNABLES ? env : { ...env, GLIBC_TUNABLES: tunables }, changed }
}

/** `current` (colon-separated `name=value` pairs) plus each of `mallocTunables` it does not set. */
export const withMallocTunables = (current) => {
  const pairs = current === undefined || current === "" ? [] : current.split(":")
  const named = new Set(pairs.map((pair) => pair.split("=")[0]))
  const added = Object.entries(mallocTunables).filter(([name]) => !named.has(name)).map(([name, value]) =>
    `${name}=${value}`
  )
  return added.length === 0 ? current : [...pairs, ...added].join(":")
}

// Test tiers: every test file runs on embedded PGlite; when ENGRAM_TEST_DATABASE_URL names a PostgreSQL
// server, the same files run a second time against it (`.ci/run` starts one and sets the variable).
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"
import { tierIndependentTests } from "./test/tierIndependent.ts"

const postgresUrl = process.env["ENGRAM_TEST_DATABASE_URL"]

// The GloVe table is converted once per machine and shared by every test (and the child processes they start).
const gloveCache = join(tmpdir(), "engram-glove-cache", "models")

// Node's on-disk cache of compiled modules (`NODE_COMPILE_CACHE`), shared the same way by the test processes and the
// engram processes they start. A CLI command spent 1.4 CPU s, 1.0 with it (`node bench/start-cost.ts`); Node writes
// the cache when a process exits normally, so a server start gains only from what such a process loaded before it.
const compileCache = join(tmpdir(), "engram-node-compile-cache")

// The browser tests exercise the web UI, and the CLI tests a client of the HTTP API (its --embedded engine always
// runs PGlite), not the database: both run on the PGlite tier only.
const clientsOnlyOnPglite = ["test/ui/**", "test/cli/**"]

// A file that no path of imports connects to the tier (test/tierIndependent.ts: not TestDatabase.ts, nor anything
// naming ENGRAM_TEST_DATABASE) would run the same on PostgreSQL as on PGlite: it runs once, on the PGlite tier
// (67 of 206 files, ~76 s of the PostgreSQL tier's summed file time in the CI run of 29 Nov 14:16).
const sameOnEveryTier = tierIndependentTests(import.meta.dirname)

// Most files share their worker's modules (no isolation): loading the module graph afresh for each of ~260 files was a
// quarter of a CI run. Files that start processes, run a cluster or time background work get a fresh one each, as
// before, so nothing one file leaves running (a timer, a brain, a child) can touch them. An HTTP test
// (`*.http.test.ts`, beside the unit tests of the folder that owns its feature) shares modules wherever it lives.
const isolatedDirectories = ["test/process", "test/cluster", "test/bank", "test/brain", "test/ui", "test/cli"]
const httpTests = "**/*.http.test.ts"

const tier = (name: string, database: string, exclude: Array<string> = []) =>
  [true, false].map((isolate) => ({
    extends: true as const,
    test: {
      name: isolate ? `${name}-isolated` : name,
      isolate,
      env: {
        ENGRAM_TEST_DATABASE: database,
        SERVICE_API_EMBEDDINGS_CACHE_DIR: gloveCache,
        NODE_COMPILE_CACHE: compileCache
      },
      include: isolate ? isolatedDirectories.map((directory) => `${directory}/**/*.test.ts`) : ["test/**/*.test.ts"],
      exclude: [
        "**/node_modules/**",
        ...exclude,
        ...(isolate ? [httpTests] : isolatedDirectories.map((directory) => `${directory}/**/!(*.http).test.ts`))
      ]
    }
  }))

// A test process that dies of a fatal error (heap exhausted, a V8 check) leaves Node's diagnostic report here; `.ci/run`
// prints them, since the crash itself shows only as "Worker exited unexpectedly with signal …".
const reportDirectory = process.env["ENGRAM_NODE_REPORT_DIR"] ?? join(tmpdir(), "engram-node-reports")

// WebAssembly stays in Liftoff in the test processes from their launch, as PGlite's does in a server
// (`layers/storage/PgliteTiering.ts`). Left to that file, a test process, which opens PGlite many times on several
// threads, turned V8's tier-up flags off and on around each open while other modules lived: one CI run's worker died
// of a V8 check in freeing WebAssembly code (`jit_page_->allocations_.erase(addr) == 1`, SIGTRAP) mid-file.
const webAssemblyInLiftoff = ["--no-wasm-tier-up", "--no-wasm-dynamic-tiering"]

export default defineConfig({
  test: {
    execArgv: [
      "--report-on-fatalerror",
      `--report-directory=${reportDirectory}`,
      "--report-compact",
      ...webAssemblyInLiftoff
    ],
    // The run's temporary directories and PostgreSQL schemas, removed when it ends.
    globalSetup: ["test/globalSetup.ts"],
    // Each test file's data dirs are removed when it ends (they live in memory when the machine has room for them).
    setupFiles: ["test/support/removeDataDirs.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    projects: postgresUrl
      ? [...tier("pglite", "pglite"), ...tier("postgres", postgresUrl, [...clientsOnlyOnPglite, ...sameOnEveryTier])]
      : tier("pglite", "pglite")
  }
})

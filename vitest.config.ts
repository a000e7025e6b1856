// Test tiers: every test file runs on embedded PGlite; when ENGRAM_TEST_DATABASE_URL names a PostgreSQL
// server, the same files run a second time against it (`.ci/run` starts one and sets the variable).
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"

const postgresUrl = process.env["ENGRAM_TEST_DATABASE_URL"]

// The GloVe table is converted once per machine and shared by every test (and the child processes they start).
const gloveCache = join(tmpdir(), "engram-glove-cache", "models")

// The browser tests exercise the web UI, and the CLI tests a client of the HTTP API (its --embedded engine always
// runs PGlite), not the database: both run on the PGlite tier only.
const clientsOnlyOnPglite = ["test/ui/**", "test/cli/**"]

const tier = (name: string, database: string, exclude: Array<string> = []) => ({
  extends: true as const,
  test: {
    name,
    env: { ENGRAM_TEST_DATABASE: database, SERVICE_API_EMBEDDINGS_CACHE_DIR: gloveCache },
    exclude: ["**/node_modules/**", ...exclude]
  }
})

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The run's temporary directories and PostgreSQL schemas, removed when it ends.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    projects: postgresUrl ? [tier("pglite", "pglite"), tier("postgres", postgresUrl, clientsOnlyOnPglite)] : [tier("pglite", "pglite")]
  }
})

/**
 * Names that belong to this test run, so that its teardown (`test/globalSetup.ts`) can drop them all.
 */

/** Set by the run's global setup; a test file run on its own outside vitest's setup gets `solo`. */
const runTag = process.env["ENGRAM_TEST_RUN"] ?? "solo"

/** A fresh PostgreSQL schema name of this run. */
export const freshSchemaName = (): string => `t_${runTag}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`

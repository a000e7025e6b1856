/**
 * A setup file (vitest.config.ts): after each test file, its data dirs are removed (`DataDirs.ts`). Its `afterAll`
 * is registered before the file's own hooks and so runs after them, once the file's servers have closed.
 */
import { afterAll } from "vitest"
import { removeDataDirs } from "./DataDirs.ts"

afterAll(removeDataDirs)

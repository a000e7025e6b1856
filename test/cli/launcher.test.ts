/**
 * The launcher behind `npm start` and `engram`: which program it runs (bin/entry.mjs) and the server's process
 * settings (bin/server-settings.mjs), what they add and what they leave.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { builtStamp, chooseEntry, programFor } from "../../bin/entry.mjs"
import { serverSettings, withMallocTunables } from "../../bin/server-settings.mjs"

/** A tree with `files` (relative path → modification time in seconds). */
const tree = (files: Record<string, number>) => {
  const root = mkdtempSync(join(tmpdir(), "engram-launcher-"))
  for (const [path, seconds] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), "")
    utimesSync(join(root, path), seconds, seconds)
  }
  return root
}

describe("entry", () => {
  it("runs dist/ when there are no sources (a packed package)", () => {
    const root = tree({ "dist/src/cli/main.js": 100 })
    assert.deepStrictEqual(chooseEntry(root, "cli/main"), {
      path: join(root, "dist/src/cli/main.js"),
      compiled: true,
      stale: false
    })
  })

  it("runs the sources when nothing was compiled, or compiled without the build's stamp", () => {
    assert.isFalse(chooseEntry(tree({ "src/cli/main.ts": 100 }), "cli/main").compiled)
    const unstamped = tree({ "src/cli/main.ts": 100, "dist/src/cli/main.js": 200 })
    assert.deepStrictEqual(chooseEntry(unstamped, "cli/main"), {
      path: join(unstamped, "src/cli/main.ts"),
      compiled: false,
      stale: false
    })
  })

  it("runs dist/ while no source changed since its build began, the sources as soon as one did", () => {
    const files = { "src/cli/main.ts": 100, "layers/App.ts": 150, "dist/src/cli/main.js": 210 }
    const root = tree({ ...files, "dist/.built-from-sources": 200 })
    assert.strictEqual(builtStamp(root), join(root, "dist/.built-from-sources"))
    assert.deepStrictEqual(chooseEntry(root, "cli/main"), {
      path: join(root, "dist/src/cli/main.js"),
      compiled: true,
      stale: false
    })
    // A file edited (or pulled) after the build began, however deep and in either folder.
    mkdirSync(join(root, "layers/http"), { recursive: true })
    writeFileSync(join(root, "layers/http/New.ts"), "")
    utimesSync(join(root, "layers/http/New.ts"), 300, 300)
    assert.deepStrictEqual(chooseEntry(root, "cli/main"), {
      path: join(root, "src/cli/main.ts"),
      compiled: false,
      stale: true
    })
  })
})

const fixed = "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072"

describe("program", () => {
  it("runs `serve` alone (npm start) from the service's entry, anything else from the command line's", () => {
    assert.deepStrictEqual(programFor(["serve"]), { program: "main", args: [] })
    assert.deepStrictEqual(programFor(["serve", "--port", "9000"]), {
      program: "cli/main",
      args: ["serve", "--port", "9000"]
    })
    assert.deepStrictEqual(programFor(["banks", "list"]), { program: "cli/main", args: ["banks", "list"] })
    assert.deepStrictEqual(programFor([]), { program: "cli/main", args: [] })
  })
})

describe("server settings", () => {
  it("adds the young generation's size and malloc's fixed thresholds on Linux", () => {
    const settings = serverSettings([], { HOME: "/home/u" }, "linux")
    assert.deepStrictEqual(settings.flags, ["--max-semi-space-size=16"])
    assert.deepStrictEqual(settings.env, { HOME: "/home/u", GLIBC_TUNABLES: fixed })
    assert.isTrue(settings.changed)
  })

  it("leaves what the user set: a semi-space size in the flags or NODE_OPTIONS, a tunable already named", () => {
    assert.deepStrictEqual(serverSettings(["--max-semi-space-size=4"], {}, "darwin"), {
      flags: [],
      env: {},
      changed: false
    })
    assert.deepStrictEqual(serverSettings([], { NODE_OPTIONS: "--max-semi-space-size=64" }, "darwin").flags, [])
    assert.strictEqual(
      withMallocTunables("glibc.malloc.mmap_threshold=65536:glibc.malloc.arena_max=2"),
      "glibc.malloc.mmap_threshold=65536:glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072"
    )
    const own = { GLIBC_TUNABLES: "glibc.malloc.trim_threshold=1:glibc.malloc.mmap_threshold=2" }
    const settings = serverSettings(["--max-semi-space-size=16"], own, "linux")
    assert.isFalse(settings.changed)
    assert.strictEqual(settings.env, own)
  })

  it("sets no tunable where glibc is not the C library's", () => {
    assert.isUndefined(serverSettings([], {}, "darwin").env["GLIBC_TUNABLES"])
    assert.isUndefined(serverSettings([], {}, "win32").env["GLIBC_TUNABLES"])
  })
})

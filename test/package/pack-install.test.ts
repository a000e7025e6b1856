/**
 * engram as a library others install: `npm run build` compiles it (here into a staged copy), `npm pack` makes the
 * tarball, a fresh project `npm install`s it, its declarations type-check a consumer's TypeScript, and a program
 * imports it with plain Node (no type stripping) and runs a bank in-process.
 *
 * No network: the fresh project's node_modules starts with links to this checkout's installed packages (the
 * tarball's dependencies, already installed here), so `npm install --offline` only has to add engram itself.
 * The test does not touch the database tier, so it runs on the pglite tier only.
 */
import { execFile } from "node:child_process"
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { assert, describe, it } from "vitest"
import { databaseTier } from "../support/TestServer.ts"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "../..")
const installed = join(root, "node_modules")

/** A fresh project whose node_modules links every package installed here (not engram itself, nor `.bin`). */
const freshProject = (directory: string) => {
  const modules = join(directory, "node_modules")
  mkdirSync(modules, { recursive: true })
  writeFileSync(join(directory, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  for (const name of readdirSync(installed)) {
    if (name === ".bin" || name === "engram" || name.startsWith(".")) continue
    if (name.startsWith("@")) {
      mkdirSync(join(modules, name))
      for (const scoped of readdirSync(join(installed, name))) {
        symlinkSync(join(installed, name, scoped), join(modules, name, scoped))
      }
    } else {
      symlinkSync(join(installed, name), join(modules, name))
    }
  }
}

describe.skipIf(databaseTier !== "pglite")("the packed package", () => {
  it("installs into a fresh project, and a program retains and recalls with it on plain Node", async () => {
    const work = mkdtempSync(join(tmpdir(), "engram-pack-"))
    // Built and packed from a staged copy: the checkout's own dist/ is what `npm start` and the CLI tests run while
    // this test goes on (bin/entry.mjs), and a compiler rewriting it under them would be read half-written.
    const stage = join(work, "stage")
    await run(join(installed, ".bin", "tsc"), ["-p", "tsconfig.build.json", "--outDir", join(stage, "dist")], {
      cwd: root
    })
    // What `npm pack` takes from the checkout: package.json's `files` (the compiled ones are built above), the
    // manifest and the README, which npm always adds.
    const ours = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: Array<string> }
    const checkoutFiles = ours.files.filter((path) => !path.startsWith("dist/"))
    for (const path of ["package.json", "README.md", ...checkoutFiles]) {
      cpSync(join(root, path), join(stage, path), { recursive: true })
    }
    const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: stage })
    const [tarball] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
    assert.isDefined(tarball)
    const paths = tarball.files.map((file) => file.path)
    assert.include(paths, "dist/src/index.js")
    assert.include(paths, "dist/src/index.d.ts")
    assert.deepStrictEqual(
      paths.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts")),
      [],
      "no TypeScript sources"
    )

    const project = join(work, "consumer")
    freshProject(project)
    await run("npm", [
      "install",
      "--offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--omit=dev",
      "--no-package-lock",
      join(work, tarball.filename)
    ], { cwd: project })
    const manifest = JSON.parse(readFileSync(join(project, "node_modules", "engram", "package.json"), "utf8"))
    assert.deepStrictEqual(manifest.exports["."], { types: "./dist/src/index.d.ts", import: "./dist/src/index.js" })
    assert.isFalse(existsSync(join(project, "node_modules", "engram", "src")), "the sources are not installed")

    // Its declarations type a consumer's TypeScript (the fixture is kept as .txt: in this repository "engram" would
    // resolve to its own dist/, which does not exist before a build, and `npm run check` would fail on it).
    writeFileSync(join(project, "consumer.ts"), readFileSync(join(import.meta.dirname, "fixtures", "consumer.ts.txt")))
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2024",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: []
        },
        files: ["consumer.ts"]
      })
    )
    await run(join(installed, ".bin", "tsc"), ["-p", "tsconfig.json"], { cwd: project })

    const program = join(project, "program.mjs")
    writeFileSync(program, readFileSync(join(import.meta.dirname, "fixtures", "program.mjs")))
    const { stdout } = await run(process.execPath, ["--no-experimental-strip-types", program, join(work, "data")], {
      cwd: project,
      env: { ...process.env, NODE_OPTIONS: "" }
    })
    const lines = stdout.trim().split("\n")
    const answer = JSON.parse(lines[lines.length - 1]!) as { recalled: Array<string> }
    assert.isTrue(answer.recalled.some((text) => text.includes("Alice brews green tea")), stdout)
  }, 600_000)
})

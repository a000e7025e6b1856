/**
 * Compiles the TypeScript sources into dist/ (no type check: `npm run check` does that) and stamps the build with the
 * time it began reading them, so bin/entry.mjs runs the compiled program only while no source changed since. Run by
 * `npm install` / `npm ci` (the package's `prepare` script); plain JavaScript, so whichever Node npm runs it with can.
 * Without TypeScript installed (a production install) or when the compiler fails, it says so and leaves the sources
 * to run as they are: it never fails the install.
 */
import { spawnSync } from "node:child_process"
import { existsSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { builtStamp } from "./entry.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const stamp = builtStamp(root)

const compiler = () => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc")
  } catch {
    return undefined
  }
}

const tsc = compiler()
if (!existsSync(join(root, "src"))) {
  // A packed package: dist/ is what it ships.
} else if (tsc === undefined) {
  console.warn("engram: typescript is not installed (dev dependencies omitted?); the sources run as they are")
} else {
  const began = new Date()
  rmSync(stamp, { force: true })
  const started = performance.now()
  const result = spawnSync(
    process.execPath,
    [tsc, "-p", join(root, "tsconfig.build.json"), "--noCheck", "--declaration", "false"],
    { cwd: root, stdio: "inherit" }
  )
  if (result.status === 0) {
    writeFileSync(stamp, "")
    utimesSync(stamp, began, began)
    console.log(`engram: compiled into dist/ in ${Math.round(performance.now() - started)} ms`)
  } else {
    console.warn(`engram: compiling into dist/ failed (${result.status ?? result.signal}); the sources run as they are`)
  }
}

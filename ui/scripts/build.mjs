/**
 * Builds the web UI into ui/dist; run by `npm install` / `npm ci` (the package's `prepare` script) and by
 * `npm run build:ui`. Plain JavaScript, so whichever Node npm runs it with (20 or the project's 24) can. When Vite
 * is not installed (a production install without dev dependencies) it says so and leaves /ui answering
 * "not built" rather than failing the install.
 */
const vite = await import("vite").catch(() => undefined)
if (vite === undefined) {
  console.warn("engram: vite is not installed (dev dependencies omitted?); the web UI at /ui is not built")
} else {
  const started = performance.now()
  await vite.build({ configFile: new URL("../vite.config.ts", import.meta.url).pathname })
  console.log(`engram: web UI built into ui/dist in ${Math.round(performance.now() - started)} ms`)
}

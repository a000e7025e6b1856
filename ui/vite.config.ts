// Builds the web control plane into ui/dist, which engram serves at /ui (layers/http/UiLive.ts).
import { defineConfig } from "vite"

export default defineConfig({
  root: import.meta.dirname,
  base: "/ui/",
  logLevel: "warn",
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1200, sourcemap: false },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } }
})

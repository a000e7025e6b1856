/**
 * Test support for the web UI: makes sure ui/dist is built (CI builds it at `npm ci`), finds Debian's Chromium,
 * and drives it with playwright-core, collecting console errors and saving screenshots under test-artifacts/ui.
 */
import { Context, Effect, Layer } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"

const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
export const uiDist = join(repoRoot, "ui", "dist")
export const artifactsDir = join(repoRoot, "test-artifacts", "ui")

/** The browser the tests drive: ENGRAM_TEST_CHROMIUM, else Debian's package. `undefined` skips the browser tests. */
export const chromiumPath = [process.env["ENGRAM_TEST_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((path): path is string => path !== undefined && path !== "" && existsSync(path))

export const skipReason =
  "no Chromium found at /usr/bin/chromium (apt-get install chromium, or set ENGRAM_TEST_CHROMIUM)"

/** Builds the UI once when the checkout has no build (a fresh clone where `npm install` has not run `prepare`). */
export const ensureUiBuilt = Effect.promise(async () => {
  if (existsSync(join(uiDist, "index.html"))) return
  const vite = await import("vite")
  await vite.build({ configFile: join(repoRoot, "ui", "vite.config.ts"), logLevel: "error" })
})

export class UiBrowser extends Context.Service<UiBrowser, Browser>()("test/UiBrowser") {
  static readonly layer = Layer.effect(
    UiBrowser,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const { chromium } = await import("playwright-core")
        // Root in a container has no user namespaces for Chromium's sandbox.
        return chromium.launch({
          executablePath: chromiumPath!,
          headless: true,
          args: ["--no-sandbox", "--disable-gpu"]
        })
      }),
      (browser) => Effect.promise(() => browser.close())
    )
  )
}

export interface OpenPage {
  readonly page: Page
  /** Console errors and uncaught exceptions seen so far. */
  readonly errors: Array<string>
  readonly screenshot: (name: string) => Promise<void>
}

/** A fresh page (1280×800 unless told) that records console errors; closed with the scope. */
export const openPage = (viewport = { width: 1280, height: 800 }) =>
  Effect.gen(function*() {
    const browser = yield* UiBrowser
    const page = yield* Effect.acquireRelease(
      Effect.promise(() => browser.newPage({ viewport })),
      (page) => Effect.promise(() => page.close())
    )
    const errors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`${page.url()}: ${message.text()}`)
    })
    page.on("pageerror", (error) => errors.push(`${page.url()}: uncaught ${error.message}`))
    mkdirSync(artifactsDir, { recursive: true })
    return {
      page,
      errors,
      screenshot: (name: string) =>
        page.screenshot({ path: join(artifactsDir, `${name}.png`), fullPage: true }).then(() => undefined)
    } satisfies OpenPage
  })

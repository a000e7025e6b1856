/**
 * The README and `docs/` as a newcomer reads them: every relative link names a file of the repository, every
 * `#anchor` a heading of the page it points to (GitHub's heading slugs), and nothing points outside the repository.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)
]

/** GitHub's slug of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\- _]/gu, "").replace(/ /g, "-")

const anchorsOf = (page: string): Set<string> => {
  const text = readFileSync(join(root, page), "utf8").replace(/```[\s\S]*?```/g, "")
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

const linksOf = (page: string) => {
  const text = readFileSync(join(root, page), "utf8").replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "")
  return [...text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map(([, target]) => target!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

describe("documentation links", () => {
  it("every relative link of the README and docs/ resolves, anchors included, inside the repository", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      for (const target of linksOf(page)) {
        const [path, anchor] = target.split("#") as [string, string | undefined]
        const file = path === "" ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(path))
        const inside = relative(root, file)
        if (inside.startsWith("..")) broken.push(`${page}: ${target} leaves the repository`)
        else if (!existsSync(file)) broken.push(`${page}: ${target} names no file`)
        else if (anchor !== undefined && statSync(file).isFile() && file.endsWith(".md")) {
          if (!anchorsOf(relative(root, file)).has(anchor)) broken.push(`${page}: ${target} names no heading there`)
        }
      }
    }
    assert.deepStrictEqual(broken, [])
  })
})

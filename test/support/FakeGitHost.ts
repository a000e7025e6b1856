/**
 * A git host on loopback with GitHub's API shape, for codebase import tests: `GET /repos/{owner}/{repo}` (default
 * branch), `GET .../commits/{ref}` (the sha the branch points at, 404 for an unknown ref) and
 * `GET .../zipball/{sha}`, which redirects to `/codeload/{sha}` like the real host does. Commits are zips the test
 * pushes; every request is recorded.
 */
import { Effect } from "effect"
import { createServer } from "node:http"

export interface FakeGitHost {
  readonly origin: string
  readonly requests: Array<string>
  /** Makes `zip` the new head of `main` under `sha`. */
  readonly push: (sha: string, zip: Uint8Array) => void
}

export const fakeGitHost = (owner: string, repo: string) =>
  Effect.acquireRelease(
    Effect.callback<FakeGitHost & { close: () => void }>((resume) => {
      const commits = new Map<string, Uint8Array>()
      let head: string | null = null
      const requests: Array<string> = []
      const server = createServer((request, response) => {
        const path = (request.url ?? "").split("?")[0]!
        requests.push(path)
        const json = (status: number, body: unknown) => {
          response.writeHead(status, { "content-type": "application/json" })
          response.end(JSON.stringify(body))
        }
        const prefix = `/repos/${owner}/${repo}`
        if (path === prefix) return json(200, { full_name: `${owner}/${repo}`, default_branch: "main" })
        if (path.startsWith(`${prefix}/commits/`)) {
          const ref = decodeURIComponent(path.slice(`${prefix}/commits/`.length))
          const sha = ref === "main" ? head : commits.has(ref) ? ref : null
          return sha === null ? json(404, { message: "No commit found for SHA" }) : json(200, { sha })
        }
        if (path.startsWith(`${prefix}/zipball/`)) {
          const sha = path.slice(`${prefix}/zipball/`.length)
          response.writeHead(302, { location: `/codeload/${sha}` })
          return response.end()
        }
        if (path.startsWith("/codeload/")) {
          const zip = commits.get(path.slice("/codeload/".length))
          if (zip === undefined) return json(404, { message: "Not Found" })
          response.writeHead(200, { "content-type": "application/zip", "content-length": zip.byteLength })
          return response.end(Buffer.from(zip))
        }
        json(404, { message: "Not Found" })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({
          origin: `http://127.0.0.1:${port}`,
          requests,
          push: (sha, zip) => {
            commits.set(sha, zip)
            head = sha
          },
          close: () => server.close()
        }))
      })
    }),
    (host) => Effect.sync(() => host.close())
  )

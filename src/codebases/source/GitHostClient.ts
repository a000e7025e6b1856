/**
 * Reads a public repository from a git host with GitHub's API shape, without cloning: the default branch
 * (`GET /repos/{owner}/{repo}`), the commit a ref names (`GET .../commits/{ref}`) and the tree at that commit as
 * one zip (`GET .../zipball/{sha}`, redirects followed one checked hop at a time, at most five). Unless private
 * networks are allowed every hop must be a public address, checked by name first and again by the socket's
 * address (no DNS rebinding). Every answer is read within a byte cap (src/net/CappedBody.ts): an endless one fails
 * there, naming the cap. Failures are `GitHostError`s whose
 * message can be shown to the caller as is.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Data, Duration, Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { BodyTooLarge, cappedBytes } from "../../net/CappedBody.ts"
import { destinationDenied, guardedLookup } from "../../net/GuardedLookup.ts"
import { refusal } from "../../research/NetworkGuard.ts"
import type { CodebaseSettings } from "../CodebaseSettings.ts"

export class GitHostError extends Data.TaggedError("GitHostError")<{
  readonly message: string
  /** 400 for a bad reference or a refused host, 502 when the host failed. */
  readonly status: 400 | 502
}> {}

export interface RepoRef {
  readonly owner: string
  readonly repo: string
}

const maxRedirects = 5
interface BodyCap {
  readonly maxBytes: number
  readonly what: string
  readonly limit: string
  /** 400 when the caller's request is what is too big (an archive), 502 when the host misbehaves. */
  readonly status: 400 | 502
}

/** One API answer (repository, commit) is a few KiB; an endless or huge one is the host misbehaving. */
const apiAnswerCap: BodyCap = {
  maxBytes: 2 * 1024 * 1024,
  what: "the git host's API answer",
  limit: "the 2 MiB cap",
  status: 502
}
const userAgent = "engram-codebases/1.0"
const lookup = guardedLookup((host, address) => `${host} resolves to ${address}, not a public address`)

/** Parses `https://host/o/r[.git][/tree|commit|blob/<ref>]` or `git@host:o/r.git`. */
export const parseRepoUrl = (url: string): (RepoRef & { readonly ref: string | null }) | null => {
  const ssh = url.match(/^git@[^:]+:([^/]+)\/([^/]+?)(?:\.git)?$/)
  if (ssh) return { owner: ssh[1]!, repo: ssh[2]!, ref: null }
  const parsed = URL.parse(url)
  if (parsed === null || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) return null
  const parts = parsed.pathname.split("/").filter((part) => part !== "")
  if (parts.length < 2) return null
  const ref = parts.length >= 4 && ["tree", "commit", "blob"].includes(parts[2]!) ? parts.slice(3).join("/") : null
  return { owner: parts[0]!, repo: parts[1]!.replace(/\.git$/, ""), ref }
}

const fail = (message: string, status: 400 | 502 = 502) => Effect.fail(new GitHostError({ message, status }))

export const makeGitHostClient = (settings: CodebaseSettings) => {
  const base = settings.githostApiUrl.replace(/\/+$/, "")

  /**
   * One GET with redirects checked hop by hop; the body is read up to `maxBytes` (more is a refusal naming `what`
   * and the `limit` that capped it, answered with `status`).
   */
  const get = (path: string, cap: BodyCap, accept: string) =>
    Effect.gen(function*() {
      const { maxBytes, what, limit, status } = cap
      const agent = yield* NodeHttpClient.makeAgent(settings.githostAllowPrivateNetworks ? {} : { lookup })
      const client = yield* NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agent))
      let current = URL.parse(`${base}${path}`)
      if (current === null) return yield* fail(`the git host URL '${base}' is not valid`, 400)
      for (let hop = 0; hop <= maxRedirects; hop++) {
        const refused = yield* refusal(current, settings.githostAllowPrivateNetworks)
        if (refused !== undefined) return yield* fail(`git host refused: ${refused}`, 400)
        const response = yield* client.execute(
          HttpClientRequest.get(current.toString()).pipe(
            HttpClientRequest.setHeaders({ "user-agent": userAgent, accept })
          )
        ).pipe(
          Effect.provideService(HttpClient.TracerPropagationEnabled, false),
          Effect.mapError((error) => {
            const cause = error.reason._tag === "TransportError" ? error.reason.cause : undefined
            const denied = cause instanceof Error && (cause as NodeJS.ErrnoException).code === destinationDenied
            return new GitHostError({
              message: denied ? `git host refused: ${cause.message}` : `could not reach the git host ${current!.host}`,
              status: denied ? 400 : 502
            })
          })
        )
        const location = response.headers["location"]
        if (response.status >= 300 && response.status < 400 && location !== undefined) {
          current = URL.parse(location, current.toString())
          if (current === null) return yield* fail("the git host redirected to an invalid URL")
          continue
        }
        const bytes = yield* cappedBytes(response.stream, maxBytes).pipe(
          Effect.mapError((error) =>
            error instanceof BodyTooLarge
              ? new GitHostError({
                message: `${what} is larger than ${limit} (${maxBytes} bytes); reading stopped there`,
                status
              })
              : new GitHostError({ message: "the git host closed the connection", status: 502 })
          )
        )
        return { status: response.status, bytes }
      }
      return yield* fail(`the git host redirected more than ${maxRedirects} times`)
    }).pipe(
      Effect.scoped,
      Effect.timeoutOrElse({
        duration: settings.githostTimeout,
        orElse: () => fail(`the git host did not answer within ${Duration.format(settings.githostTimeout)}`)
      })
    )

  /** Only the fields read below; each is checked with `typeof` before use, as the host may answer anything. */
  type HostAnswer = { readonly default_branch?: unknown; readonly sha?: unknown }
  const json = (path: string) =>
    get(path, apiAnswerCap, "application/vnd.github+json").pipe(Effect.map(({ status, bytes }) => {
      let body: HostAnswer | null = null
      try {
        body = JSON.parse(new TextDecoder().decode(bytes)) as HostAnswer | null
      } catch {
        body = null
      }
      return { status, body }
    }))

  const repoPath = (ref: RepoRef) => `/repos/${encodeURIComponent(ref.owner)}/${encodeURIComponent(ref.repo)}`

  /** The commit sha a ref names (the default branch when `ref` is null). */
  const resolveCommit = Effect.fn("GitHost.resolveCommit")(function*(repo: RepoRef, ref: string | null) {
    const info = yield* json(repoPath(repo))
    if (info.status === 404) {
      return yield* fail(`repository '${repo.owner}/${repo.repo}' was not found on the git host`, 400)
    }
    if (info.status !== 200 || typeof info.body?.default_branch !== "string") {
      return yield* fail(`the git host answered HTTP ${info.status} for the repository`)
    }
    const wanted = ref ?? info.body.default_branch
    const commit = yield* json(`${repoPath(repo)}/commits/${encodeURIComponent(wanted)}`)
    if (commit.status === 404 || commit.status === 422) {
      return yield* fail(
        `ref '${wanted}' was not found in '${repo.owner}/${repo.repo}' (default branch: '${info.body.default_branch}')`,
        400
      )
    }
    if (commit.status !== 200 || typeof commit.body?.sha !== "string") {
      return yield* fail(`the git host answered HTTP ${commit.status} for ref '${wanted}'`)
    }
    return { ref: wanted, sha: commit.body.sha }
  })

  const downloadArchive = Effect.fn("GitHost.downloadArchive")(function*(repo: RepoRef, sha: string) {
    const archive = yield* get(
      `${repoPath(repo)}/zipball/${encodeURIComponent(sha)}`,
      {
        maxBytes: settings.maxArchiveBytes,
        what: "the repository archive",
        limit: "SERVICE_API_CODEBASE_MAX_ARCHIVE_BYTES",
        status: 400
      },
      "application/zip"
    )
    if (archive.status !== 200) return yield* fail(`the git host answered HTTP ${archive.status} for the archive`)
    return archive.bytes
  })

  return { resolveCommit, downloadArchive }
}

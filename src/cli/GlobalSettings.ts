/**
 * Flags every command accepts, before or after its name: where the service is (`--url`, `--api-key`, or the
 * `SERVICE_API_*` variables; `--embedded --data-dir D` for an in-process engine) and how to print (`--json`).
 */
import { Option, Redacted } from "effect"
import { Flag, GlobalFlag } from "effect/cli"

export const JsonOutput = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("print machine-readable JSON on stdout (progress and errors go to stderr)"),
    Flag.withDefault(false)
  )
})

export const ServerUrl = GlobalFlag.Setting("url")({
  flag: Flag.String("url").pipe(
    Flag.withDescription(
      "base URL of a running engram (default http://$SERVICE_API_HOST:$SERVICE_API_PORT, i.e. http://127.0.0.1:8888)"
    ),
    Flag.optional
  )
})

export const ApiKey = GlobalFlag.Setting("api-key")({
  flag: Flag.Redacted("api-key").pipe(
    Flag.withDescription("API key sent as a bearer token (default $SERVICE_API_TENANT_API_KEY)"),
    Flag.optional
  )
})

export const Embedded = GlobalFlag.Setting("embedded")({
  flag: Flag.Boolean("embedded").pipe(
    Flag.withDescription("run the engine in this process on --data-dir instead of talking to a server"),
    Flag.withDefault(false)
  )
})

export const DataDir = GlobalFlag.Setting("data-dir")({
  flag: Flag.String("data-dir").pipe(
    Flag.withDescription("data directory of the embedded engine (default $SERVICE_API_DATA_DIR, else ./.engram)"),
    Flag.optional
  )
})

export const globalSettings = [JsonOutput, ServerUrl, ApiKey, Embedded, DataDir] as const

/** The URL of the server a client reaches with no `--url`: the one `npm start` would listen on. */
export const defaultUrl = (env: NodeJS.ProcessEnv): string => {
  const host = env["SERVICE_API_HOST"] ?? "127.0.0.1"
  // A server bound to every interface is reached over loopback.
  const reachable = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host
  const port = env["SERVICE_API_PORT"] ?? "8888"
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`
}

export const apiKeyFrom = (flag: Option.Option<Redacted.Redacted<string>>, env: NodeJS.ProcessEnv) =>
  Option.orElse(flag, () =>
    Option.fromNullishOr(env["SERVICE_API_TENANT_API_KEY"]).pipe(
      Option.filter((key) => key !== ""),
      Option.map(Redacted.make)
    ))

/** Types of bin/server-settings.mjs (plain JavaScript, so the launcher runs on any Node). */
export declare const mallocTunables: Readonly<Record<string, string>>

export interface ServerSettings {
  /** Node flags to add before the script. */
  readonly flags: ReadonlyArray<string>
  /** The environment to run the server with. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Whether the server needs a process of its own (flags or environment differ from this one's). */
  readonly changed: boolean
}

export declare const serverSettings: (
  execArgv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  platform: string
) => ServerSettings

export declare const withMallocTunables: (current: string | undefined) => string | undefined

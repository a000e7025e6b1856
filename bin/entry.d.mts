/** Types of bin/entry.mjs (plain JavaScript, so the launcher runs on any Node). */
export interface Entry {
  /** The file to run. */
  readonly path: string
  /** Whether it is the compiled program in dist/. */
  readonly compiled: boolean
  /** Whether a compiled program exists but sources changed since it was built. */
  readonly stale: boolean
}

export declare const builtStamp: (root: string) => string
export declare const newestSource: (root: string) => number
export declare const chooseEntry: (root: string, relative: string) => Entry
export declare const programPath: (root: string, relative: string, compiled: boolean) => string
export declare const programFor: (
  args: ReadonlyArray<string>
) => { readonly program: string; readonly args: ReadonlyArray<string> }

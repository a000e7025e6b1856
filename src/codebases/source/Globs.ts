/**
 * Codebase globs matched without backtracking: each glob's translation (`src/domain/Glob.ts`) run by `re2js`, RE2's
 * automata, in time linear in the path for a given glob. A backtracking engine took minutes for `*a*a…*b` against a
 * path of sixty `a`s; RE2 takes milliseconds. The whole selection's matching time is bounded in `ArchiveSelection`.
 */
import { RE2JS } from "re2js"
import { translateGlob } from "../../domain/Glob.ts"

export interface CompiledGlob {
  readonly glob: string
  readonly matches: (path: string) => boolean
}

/** Compiles each glob once (for one selection; nothing is cached across requests). */
export const compileGlobs = (globs: ReadonlyArray<string>): ReadonlyArray<CompiledGlob> =>
  globs.map((glob) => {
    const pattern = RE2JS.compile(translateGlob(glob).source)
    return { glob, matches: (path) => pattern.testExact(path) }
  })

/**
 * Codebase selection globs, fnmatch-style as the spec says: `*` is any run of characters (`/` included), `?` any one
 * character, `[seq]` / `[!seq]` a character in (or not in) the set with `a-z` ranges, everything else literal — no
 * braces, no backslash escapes, no `**` of its own (a `*` already crosses `/`).
 *
 * A glob is user input, so it is never a backtracking RegExp: it is translated here into a regular expression with no
 * lookaround, backreference or lazy quantifier, which `src/codebases/source/Globs.ts` runs with RE2's automata. The
 * limits below keep that cheap; the schema refuses globs beyond them.
 */

/** The longest glob accepted, its most wildcards (a run of `*` counts once), and the most globs in a list. */
export const globLimits = { length: 128, wildcards: 16, perList: 32 } as const

export interface TranslatedGlob {
  /** A regular expression source matching the whole path. */
  readonly source: string
  /** Wildcards in the glob: each run of `*`, each `?`, each `[…]`. */
  readonly wildcards: number
}

const special = /[\\^$.|?*+()[\]{}/-]/

const literal = (char: string) => (special.test(char) ? `\\${char}` : char)
const inClass = (char: string) => ("\\]^-[".includes(char) ? `\\${char}` : char)

/** The glob as a regular expression source (see the module doc for what each part means). */
export const translateGlob = (glob: string): TranslatedGlob => {
  const chars = [...glob]
  let source = ""
  let wildcards = 0
  let lastWasStar = false
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!
    if (char === "*") {
      if (!lastWasStar) {
        source += "[\\s\\S]*"
        wildcards++
      }
      lastWasStar = true
      continue
    }
    lastWasStar = false
    if (char === "?") {
      source += "[\\s\\S]"
      wildcards++
      continue
    }
    if (char !== "[") {
      source += literal(char)
      continue
    }
    // A set runs to the next `]`, which may not be its first member; an unclosed `[` is a literal.
    let end = i + 1
    if (chars[end] === "!") end++
    if (chars[end] === "]") end++
    while (end < chars.length && chars[end] !== "]") end++
    if (end >= chars.length) {
      source += "\\["
      continue
    }
    const negated = chars[i + 1] === "!"
    const members = chars.slice(negated ? i + 2 : i + 1, end)
    const parts: Array<string> = []
    for (let k = 0; k < members.length; k++) {
      const low = members[k]!
      const high = members[k + 2]
      if (members[k + 1] === "-" && high !== undefined) {
        // A range that runs backwards matches nothing, as in Python's fnmatch.
        if (low.codePointAt(0)! <= high.codePointAt(0)!) parts.push(`${inClass(low)}-${inClass(high)}`)
        k += 2
      } else {
        parts.push(inClass(low))
      }
    }
    source += parts.length === 0 ? (negated ? "[\\s\\S]" : "[^\\s\\S]") : `[${negated ? "^" : ""}${parts.join("")}]`
    wildcards++
    i = end
  }
  return { source: `^${source}$`, wildcards }
}

/** Why a glob is refused, or undefined when it is within the limits. */
export const globProblem = (glob: string): string | undefined => {
  if (glob.length > globLimits.length) return `a glob may have at most ${globLimits.length} characters`
  if (translateGlob(glob).wildcards > globLimits.wildcards) {
    return `a glob may have at most ${globLimits.wildcards} wildcards (a run of * counts once)`
  }
  return undefined
}

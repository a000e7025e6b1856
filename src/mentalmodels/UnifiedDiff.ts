/**
 * A unified diff of two documents, line by line (longest common subsequence, three lines of context), for the
 * dry-run refresh. Mental models are bounded (at most 8192 tokens); past a bound on the comparison table the
 * diff is one hunk replacing everything, so a pathological pair can never hold the event loop.
 */

const maxCells = 4_000_000
const context = 3

type Edit = { readonly kind: " " | "-" | "+"; readonly line: string }

const edits = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Edit> => {
  if (a.length * b.length > maxCells) {
    return [...a.map((line) => ({ kind: "-" as const, line })), ...b.map((line) => ({ kind: "+" as const, line }))]
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1
  const lengths = new Uint32Array((a.length + 1) * width)
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] = a[i] === b[j]
        ? lengths[(i + 1) * width + j + 1]! + 1
        : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!)
    }
  }
  const out: Array<Edit> = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: " ", line: a[i]! })
      i++
      j++
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) {
      out.push({ kind: "-", line: a[i++]! })
    } else {
      out.push({ kind: "+", line: b[j++]! })
    }
  }
  while (i < a.length) out.push({ kind: "-", line: a[i++]! })
  while (j < b.length) out.push({ kind: "+", line: b[j++]! })
  return out
}

const linesOf = (text: string) => text === "" ? [] : text.split("\n")

/** The diff from `before` to `after`; empty when they are the same. */
export const unifiedDiff = (before: string, after: string, names = { before: "current", after: "preview" }): string => {
  if (before === after) return ""
  const all = edits(linesOf(before), linesOf(after))
  const changed = all.flatMap((edit, index) => (edit.kind === " " ? [] : [index]))
  const hunks: Array<string> = []
  let start = 0
  while (start < changed.length) {
    // A hunk takes every change within twice the context of the previous one.
    let end = start
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= 2 * context) end++
    const from = Math.max(0, changed[start]! - context)
    const to = Math.min(all.length - 1, changed[end]! + context)
    let oldLine = 1
    let newLine = 1
    for (const edit of all.slice(0, from)) {
      if (edit.kind !== "+") oldLine++
      if (edit.kind !== "-") newLine++
    }
    const body = all.slice(from, to + 1)
    const oldCount = body.filter((edit) => edit.kind !== "+").length
    const newCount = body.filter((edit) => edit.kind !== "-").length
    hunks.push(
      `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${
        newCount === 0 ? newLine - 1 : newLine
      },${newCount} @@`,
      ...body.map((edit) => `${edit.kind}${edit.line}`)
    )
    start = end + 1
  }
  return [`--- ${names.before}`, `+++ ${names.after}`, ...hunks].join("\n") + "\n"
}

/**
 * What a command prints: with `--json`, exactly one JSON document on stdout; otherwise aligned tables and
 * key/value lists for people. Progress and diagnostics never go to stdout.
 */
import { Console, Effect } from "effect"
import { JsonOutput } from "./GlobalSettings.ts"

export type Cell = string | number | boolean | null | undefined

const cellText = (value: Cell): string => value === null || value === undefined ? "-" : String(value)

/** Columns padded to their widest cell; a long last column is left as it is (terminals wrap it). */
export const renderTable = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Cell>>): string => {
  const texts = rows.map((row) => row.map((cell) => cellText(cell).replace(/\s+/g, " ")))
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...texts.map((row) => row[column]?.length ?? 0))
  )
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, column) => column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)).join("  ")
      .trimEnd()
  return [line(headers), line(widths.map((width) => "-".repeat(width))), ...texts.map(line)].join("\n")
}

export const renderPairs = (pairs: ReadonlyArray<readonly [string, Cell]>): string => {
  const width = Math.max(0, ...pairs.map(([key]) => key.length))
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${cellText(value)}`).join("\n")
}

/** Prints `value` as JSON under `--json`, else the human rendering. */
export const emit = (value: unknown, human: () => string) =>
  Effect.gen(function*() {
    const json = yield* JsonOutput
    yield* Console.log(json ? JSON.stringify(value, null, 2) : human())
  })

export const shorten = (text: string, max: number) => text.length <= max ? text : `${text.slice(0, max - 1)}…`

/** A message for people on stderr (never under stdout, so `--json` output stays clean). */
export const note = (message: string) => Console.error(message)

/**
 * Turns an import request (JSONL text or an array, exactly one) into validated payloads, or into every row-level
 * problem at once — each naming its line (JSONL, counted from 1, blank lines included in the count) or its
 * index — so a client can fix the whole file in one pass. Nothing is imported unless every row is valid. JSONL
 * strings get the same cleaning as request bodies (NUL removed, lone surrogates replaced) and the same caps on depth
 * and elements (`domain/JsonShape`'s defaults); more than `maxImportRows` rows are refused before any is parsed. The
 * rows are checked as sliced work (`Sliced`): 10,000 rows held the event loop for ~50 ms in one piece.
 */
import type { SchemaType, SetImport } from "../domain/Dataset.ts"
import { FieldIssue, ValidationError } from "../domain/Errors.ts"
import { shapeMessage, shapeProblem } from "../domain/JsonShape.ts"
import { scanJson } from "../domain/StorableText.ts"
import { every, type Sliced } from "../brain/Sliced.ts"
import { type JsonObject, payloadProblems } from "./Payloads.ts"

/** Rows one import may carry; larger files are imported in several requests. */
export const maxImportRows = 10_000
/** Problems listed in one answer; the count says how many there were in all. */
const maxReportedProblems = 50
/** Rows checked between two points where the work may pause. */
const rowsPerStep = 100

interface RowProblem {
  readonly field: string
  readonly message: string
}

interface Checked {
  readonly payloads: Array<JsonObject>
  readonly problems: Array<RowProblem>
}

const checkLine = (line: string, field: string, schemaType: SchemaType, into: Checked) => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return void into.problems.push({ field, message: `not valid JSON (${(error as Error).message})` })
  }
  // The lines were escaped inside the request body, so the edge's text hygiene never saw their strings.
  const scanned = scanJson(value)
  if (scanned._tag === "Refused") {
    return void into.problems.push({ field, message: `${scanned.field} ${scanned.message}` })
  }
  const found = payloadProblems(schemaType, scanned.value)
  if (found.length > 0) return void into.problems.push({ field, message: found.join("; ") })
  into.payloads.push(scanned.value as JsonObject)
}

function* parseJsonl(text: string, schemaType: SchemaType): Sliced<Checked> {
  const checked: Checked = { payloads: [], problems: [] }
  const pause = every(rowsPerStep)
  const lines = text.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    if (line.trim() !== "") checkLine(line, `jsonl line ${index + 1}`, schemaType, checked)
    if (pause()) yield
  }
  return checked
}

function* checkArray(rows: ReadonlyArray<unknown>, schemaType: SchemaType): Sliced<Checked> {
  const checked: Checked = { payloads: [], problems: [] }
  const pause = every(rowsPerStep)
  for (const [index, row] of rows.entries()) {
    const found = payloadProblems(schemaType, row)
    if (found.length > 0) checked.problems.push({ field: `sets[${index}]`, message: found.join("; ") })
    else checked.payloads.push(row as JsonObject)
    if (pause()) yield
  }
  return checked
}

const refuse = (problems: ReadonlyArray<RowProblem>) => {
  const shown = problems.slice(0, maxReportedProblems)
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : ""
  return new ValidationError({
    detail: `${problems.length} invalid row${problems.length === 1 ? "" : "s"}, nothing was imported: ` +
      shown.map((problem) => `${problem.field}: ${problem.message}`).join("; ") + more,
    errors: shown.map((problem) => new FieldIssue({ field: problem.field, location: "body", message: problem.message }))
  })
}

export type ImportedRows = { readonly _tag: "ok"; readonly payloads: ReadonlyArray<JsonObject> } | {
  readonly _tag: "invalid"
  readonly error: ValidationError
}

const tooManyRows = (field: string, rows: number) =>
  ValidationError.single(field, `holds ${rows} rows; at most ${maxImportRows} per import`)

/** Lines with something on them, as `parseJsonl` counts rows, 10,000 lines per step. */
function* countingRows(text: string): Sliced<number> {
  let rows = 0
  const pause = every(10_000)
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf("\n", start)
    const end = newline < 0 ? text.length : newline
    if (text.slice(start, end).trim() !== "") rows++
    start = end + 1
    if (pause()) yield
  }
  return rows
}

/** The payloads to import, or a 400 naming every bad row; run it with `runSliced` (or `runWhole`). */
export function* importRows(request: SetImport, schemaType: SchemaType): Sliced<ImportedRows> {
  const hasJsonl = request.jsonl !== undefined
  const hasSets = request.sets !== undefined
  if (hasJsonl === hasSets) {
    return { _tag: "invalid", error: ValidationError.single("jsonl", "give exactly one of jsonl or sets") }
  }
  // JSON lines sit escaped inside one string of the body, so the edge's caps never saw their shape.
  const shape = hasJsonl ? shapeProblem(request.jsonl!) : undefined
  if (shape !== undefined) return { _tag: "invalid", error: ValidationError.single("jsonl", shapeMessage(shape)) }
  // Counted before anything is parsed: a file of a million rows is refused at once, not after checking each.
  const field = hasJsonl ? "jsonl" : "sets"
  const rowCount = hasJsonl ? yield* countingRows(request.jsonl!) : request.sets!.length
  if (rowCount > maxImportRows) return { _tag: "invalid", error: tooManyRows(field, rowCount) }
  const { payloads, problems } = hasJsonl
    ? yield* parseJsonl(request.jsonl!, schemaType)
    : yield* checkArray(request.sets!, schemaType)
  if (problems.length > 0) return { _tag: "invalid", error: refuse(problems) }
  if (payloads.length === 0) return { _tag: "invalid", error: ValidationError.single(field, "holds no rows") }
  return { _tag: "ok", payloads }
}

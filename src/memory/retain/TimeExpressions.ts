/**
 * Resolves time expressions in text ("yesterday", "last May", "two weeks ago", "in 2022") against the time the
 * text was said, into a window with the precision the text gives: a day, a month or a year. chrono-node does
 * the parsing; month names with "last/this/next", which it does not resolve, are handled here. A month alone ("in
 * March") is the next one, unless its sentence tells of the past ("Alice moved to Lisbon in March", "Where did she
 * work in January?"): then it is the last one.
 */
// English only: the package root loads all of its 16 languages (266 modules, ~190 ms of every start; `en` is 51).
import * as chrono from "chrono-node/en"
import { nlp } from "../Compromise.ts"

export interface TimeWindow {
  /** The words in the text. */
  readonly expression: string
  readonly start: Date
  readonly end: Date
  readonly precision: "day" | "month" | "year" | "instant"
}

const months = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december"
]

const utc = (year: number, month: number, day: number) => new Date(Date.UTC(year, month, day))

const dayWindow = (date: Date): [Date, Date] => {
  const start = utc(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
  return [start, new Date(start.getTime() + 86_400_000 - 1)]
}

const monthWindow = (
  year: number,
  month: number
): [Date, Date] => [utc(year, month, 1), new Date(utc(year, month + 1, 1).getTime() - 1)]

const yearWindow = (year: number): [Date, Date] => [utc(year, 0, 1), new Date(utc(year + 1, 0, 1).getTime() - 1)]

const yearExpression = /\b(?:in|since|during|back in|by|until)\s+((?:19|20)\d{2})\b(?!\s*[-/])/gi

const relativeMonth =
  /\b(last|this|next|in)\s+(january|february|march|april|may|june|july|august|september|october|november|december)(?:,?\s+((?:19|20)\d{2}))?\b/gi

const fromChrono = (result: chrono.ParsedResult): TimeWindow => {
  const start = result.start.date()
  const known = (component: "day" | "month" | "year" | "hour") => result.start.isCertain(component)
  const endDate = result.end?.date()
  if (known("hour")) {
    return { expression: result.text, start, end: endDate ?? start, precision: "instant" }
  }
  if (known("day") || (!known("month") && !known("year"))) {
    const [dayStart] = dayWindow(start)
    const [, dayEnd] = dayWindow(endDate ?? start)
    // "last year" / "last month" give an uncertain day: widen to the unit the text names.
    if (/\byear\b/i.test(result.text)) {
      const [s, e] = yearWindow(start.getUTCFullYear())
      return { expression: result.text, start: s, end: e, precision: "year" }
    }
    if (/\bmonth\b/i.test(result.text)) {
      const [s, e] = monthWindow(start.getUTCFullYear(), start.getUTCMonth())
      return { expression: result.text, start: s, end: e, precision: "month" }
    }
    return { expression: result.text, start: dayStart, end: dayEnd, precision: "day" }
  }
  if (known("month")) {
    const [s, e] = monthWindow(start.getUTCFullYear(), start.getUTCMonth())
    return { expression: result.text, start: s, end: e, precision: "month" }
  }
  const [s, e] = yearWindow(start.getUTCFullYear())
  return { expression: result.text, start: s, end: e, precision: "year" }
}

const firstStorable = Date.parse("0001-01-01T00:00:00Z")
const lastStorable = Date.parse("9999-12-31T23:59:59.999Z")

/**
 * The date moved into the years 0001-9999: the range a date-time has in ISO 8601 text as PostgreSQL reads it. Year
 * 0000 ("0000-01-01", or 0001-01-01 minus a day) is a valid JavaScript date that PostgreSQL refuses.
 */
export const clampToStorable = (date: Date): Date =>
  new Date(Math.min(Math.max(date.getTime(), firstStorable), lastStorable))

const isStorable = (window: TimeWindow) =>
  window.start.getTime() >= firstStorable && window.end.getTime() <= lastStorable

/** Words that put a sentence's month ahead even beside a past form ("was planned for April", "is scheduled in May"). */
const aheadWords =
  /\b(will|shall|going to|gonna|plan|plans|planned|planning|schedule|scheduled|upcoming|next|expects?|expected|hopes? to|intends? to|is|are|am)\b/i

/**
 * Whether the sentence around `position` tells of the past: a past-tense verb by compromise's tagger ("moved", "did
 * work", "met") and nothing that points ahead. A present "is/are" counts as ahead: "the trip is in January".
 */
const tellsOfPast = (text: string, position: number): boolean => {
  const from = Math.max(...[".", "!", "?", "\n"].map((mark) => text.lastIndexOf(mark, position - 1))) + 1
  const ends = [".", "!", "?", "\n"].map((mark) => text.indexOf(mark, position)).filter((at) => at >= 0)
  const sentence = text.slice(from, ends.length === 0 ? text.length : Math.min(...ends))
  return !aheadWords.test(sentence) && nlp(sentence).has("#PastTense")
}

/** Every time expression in `text`, resolved against `reference` (the moment the text was said). */
export const resolveTimes = (text: string, reference: Date): Array<TimeWindow> => {
  const windows: Array<TimeWindow & { readonly position: number }> = []
  const covered: Array<[number, number]> = []
  for (const match of text.matchAll(relativeMonth)) {
    const modifier = match[1]!.toLowerCase()
    const month = months.indexOf(match[2]!.toLowerCase())
    const refYear = reference.getUTCFullYear()
    const refMonth = reference.getUTCMonth()
    // "in January 2023" names its year; "in January" alone is the next one (the last one in a sentence about the
    // past), "last January" the one before.
    const named = match[3] === undefined ? undefined : Number(match[3])
    const year = named !== undefined
      ? named
      : modifier === "last"
      ? (month < refMonth ? refYear : refYear - 1)
      : modifier === "next"
      ? (month > refMonth ? refYear : refYear + 1)
      : modifier === "this"
      ? refYear
      : tellsOfPast(text, match.index)
      ? (month <= refMonth ? refYear : refYear - 1)
      : (month >= refMonth ? refYear : refYear + 1)
    const [start, end] = monthWindow(year, month)
    windows.push({ expression: match[0], start, end, precision: "month", position: match.index })
    covered.push([match.index, match.index + match[0].length])
  }
  for (const match of text.matchAll(yearExpression)) {
    const [start, end] = yearWindow(Number(match[1]))
    windows.push({ expression: match[0], start, end, precision: "year", position: match.index })
    covered.push([match.index, match.index + match[0].length])
  }
  for (const result of chrono.parse(text, { instant: reference, timezone: 0 }, { forwardDate: false })) {
    const overlaps = covered.some(([from, to]) => result.index < to && result.index + result.text.length > from)
    // A bare number or weekday-less fragment like "may" alone is too ambiguous to trust.
    if (overlaps || /^(may|march|sun|sat)$/i.test(result.text.trim())) continue
    windows.push({ ...fromChrono(result), position: result.index })
  }
  // In the order the text says them: the first is the fact's own time.
  // A year outside 0001-9999 ("0000-01-01") names no time that can be stored or searched: it is not a time expression.
  return windows.filter(isStorable).sort((a, b) => a.position - b.position).map(({ position: _, ...window }) => window)
}

/**
 * "4 March 2024" and "March 2024", as `Intl.DateTimeFormat("en-GB", …, { timeZone: "UTC" })` writes them for years 1
 * to 9999 (the storable ones), by hand: building that formatter made ICU map about 5 MiB of its date data into every
 * server's memory at start, for two fixed English formats.
 */
const monthName = (date: Date) => {
  const name = months[date.getUTCMonth()]!
  return name[0]!.toUpperCase() + name.slice(1)
}

/** A human description of a window, written into facts so readers need not redo the arithmetic. */
export const describeWindow = (window: TimeWindow): string =>
  window.precision === "year"
    ? String(window.start.getUTCFullYear())
    : window.precision === "month"
    ? `${monthName(window.start)} ${window.start.getUTCFullYear()}`
    : `${window.start.getUTCDate()} ${monthName(window.start)} ${window.start.getUTCFullYear()}`

/**
 * Reads the LoCoMo development split from ../shared/data/locomo (evaluation data, never copied into this
 * repository) and turns a conversation into retain items: one per turn, "Speaker: text", the session date as
 * timestamp and the turn's dia_id in metadata.
 */
import { existsSync, readFileSync } from "node:fs"
import { resolve } from "node:path"

export const locomoPath = resolve(import.meta.dirname, "../../../shared/data/locomo/locomo-dev.json")
export const locomoAvailable = existsSync(locomoPath)

export interface LocomoTurn {
  readonly speaker: string
  readonly dia_id: string
  readonly text: string
}
export interface LocomoQuestion {
  readonly question: string
  readonly answer?: unknown
  readonly evidence?: ReadonlyArray<string>
  readonly category: number
}
export interface LocomoSample {
  readonly sample_id: string
  readonly conversation: Record<string, unknown> & { readonly speaker_a: string; readonly speaker_b: string }
  readonly qa: ReadonlyArray<LocomoQuestion>
}

export const loadLocomo = (): ReadonlyArray<LocomoSample> => JSON.parse(readFileSync(locomoPath, "utf8"))

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

/** "1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00Z */
export const sessionTimestamp = (text: string): string => {
  const match = text.match(/(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i)
  if (!match) throw new Error(`unrecognised LoCoMo session date: ${text}`)
  const hour = (Number(match[1]) % 12) + (match[3]!.toLowerCase() === "pm" ? 12 : 0)
  const month = months.indexOf(match[5]!.toLowerCase())
  return new Date(Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2]))).toISOString()
}

export interface LocomoSession {
  readonly timestamp: string
  readonly items: ReadonlyArray<{
    readonly content: string
    readonly timestamp: string
    readonly metadata: { readonly dia_id: string }
  }>
}

export const sessionsOf = (sample: LocomoSample): ReadonlyArray<LocomoSession> => {
  const sessions: Array<LocomoSession> = []
  for (let index = 1;; index++) {
    const turns = sample.conversation[`session_${index}`] as ReadonlyArray<LocomoTurn> | undefined
    const date = sample.conversation[`session_${index}_date_time`] as string | undefined
    if (turns === undefined || date === undefined) break
    const timestamp = sessionTimestamp(date)
    sessions.push({
      timestamp,
      items: turns.map((turn) => ({
        content: `${turn.speaker}: ${turn.text}`,
        timestamp,
        metadata: { dia_id: turn.dia_id }
      }))
    })
  }
  return sessions
}

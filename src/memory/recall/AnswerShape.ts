/**
 * Reranker signals about the shape of a memory rather than its words: whether it is *about* whom the query asks
 * about (its subject, the entity it names first, is named in the query: "What instruments does Melanie play?" →
 * "Melanie: I play clarinet!" rather than "Caroline: You play any instruments?"); whether it asks a question
 * itself — a turn that asks shares the question's words but seldom holds its answer; and, for a question asking
 * when, whether the memory is dated (holds a time of its own, "I went there yesterday"). Pure and computed from the
 * candidates' texts, times and entity names, so the brain and SQL paths score alike.
 */

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether `subject` (an entity name) is named in `query`, as whole words, ignoring case. */
export const namesSubject = (query: string, subject: string | undefined): boolean =>
  subject !== undefined && subject.trim() !== "" &&
  new RegExp(`(?:^|[^\\p{L}\\p{N}])${escaped(subject.toLowerCase())}(?:[^\\p{L}\\p{N}]|$)`, "u")
    .test(query.toLowerCase())

/** Whether a memory asks a question (holds a question mark). */
export const asksQuestion = (text: string): boolean => text.includes("?")

/** A question that asks for a time: "When did…", "What year…", "How long ago…". */
export const asksWhen = (query: string): boolean =>
  /^\s*(?:when|what (?:year|month|date|day|time)|which (?:year|month|day)|how long ago)\b/i.test(query)

/**
 * Whether a memory holds a time of its own — when it happened (`time`) differs from when it was said, or is known
 * without it. A turn that answers "when" usually says it ("two days ago", "last May"), and retain dates it.
 */
export const dated = (time: Date | null, said: Date | null | undefined): boolean =>
  time !== null && (said === null || said === undefined || time.getTime() !== said.getTime())

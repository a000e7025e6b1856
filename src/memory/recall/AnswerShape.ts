/**
 * Two reranker signals about the shape of a memory rather than its words: whether it is *about* whom the query asks
 * about (its subject, the entity it names first, is named in the query: "What instruments does Melanie play?" →
 * "Melanie: I play clarinet!" rather than "Caroline: You play any instruments?"), and whether it asks a question
 * itself — a turn that asks shares the question's words but seldom holds its answer. Pure and computed from the
 * candidates' texts and entity names, so the brain and SQL paths score alike.
 */

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether `subject` (an entity name) is named in `query`, as whole words, ignoring case. */
export const namesSubject = (query: string, subject: string | undefined): boolean =>
  subject !== undefined && subject.trim() !== "" &&
  new RegExp(`(?:^|[^\\p{L}\\p{N}])${escaped(subject.toLowerCase())}(?:[^\\p{L}\\p{N}]|$)`, "u")
    .test(query.toLowerCase())

/** Whether a memory asks a question (holds a question mark). */
export const asksQuestion = (text: string): boolean => text.includes("?")

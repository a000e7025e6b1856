/** Error text for start-up failures and for errors that cross the PGlite worker's thread boundary. */

/** The messages along an error's cause chain, outermost first, leaving out those already said. */
export const describeErrorChain = (error: unknown): string => {
  const messages: Array<string> = []
  let cause = error
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    const message = cause.message
    if (message !== "" && !messages.some((seen) => seen.includes(message))) messages.push(message)
    cause = cause.cause
  }
  return messages.length === 0 ? String(error) : messages.join(": ")
}

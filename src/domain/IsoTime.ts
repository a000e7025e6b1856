/** Dates as the API writes them: ISO 8601 in UTC, or null. */
export const isoOrNull = (date: Date | null): string | null => (date === null ? null : date.toISOString())

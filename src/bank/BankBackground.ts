/**
 * The deprecated "background" of Hindsight clients, kept as what it became: text added to the bank's mission. A
 * background the mission already holds is not added again, so a client that re-sends its background at every start
 * does not grow the mission.
 */
export const appendBackground = (mission: string | null, content: string): string => {
  const text = content.trim()
  if (mission === null || mission.trim() === "") return text
  if (mission.includes(text)) return mission
  return `${mission.trimEnd()}\n\n${text}`
}

/**
 * Turns a JSONL file of conversation lines into retain items. Each non-blank line is one of:
 * - a retain item: `{"content": "...", "timestamp"?, "context"?, "metadata"?, "document_id"?, "tags"?, ...}`;
 * - a turn: `{"speaker": "Caroline", "text": "...", "timestamp"?, "dia_id"?}` → "Caroline: ..." (LoCoMo-style);
 * - a message: `{"role": "user", "content": "..."}` → "user: ...";
 * - a conversation: `{"messages": [{role, content}, ...], "timestamp"?, "document_id"?, ...}` → one item per message.
 * A line that is none of these is refused with its line number before anything is sent.
 */
export interface RetainItem {
  readonly content: string
  readonly [field: string]: unknown
}

/** Item fields passed through to the API as they are. */
const itemFields = [
  "timestamp",
  "context",
  "metadata",
  "document_id",
  "update_mode",
  "tags",
  "entities",
  "observation_scopes"
] as const

const passThrough = (line: Record<string, unknown>): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const field of itemFields) if (line[field] !== undefined) fields[field] = line[field]
  return fields
}

const isText = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

const metadataWith = (line: Record<string, unknown>, extra: Record<string, string>) => {
  const base = typeof line["metadata"] === "object" && line["metadata"] !== null ? line["metadata"] as object : {}
  const merged = { ...base, ...extra }
  return Object.keys(merged).length === 0 ? {} : { metadata: merged }
}

const lineItems = (line: Record<string, unknown>): ReadonlyArray<RetainItem> | string => {
  if (Array.isArray(line["messages"])) {
    const items: Array<RetainItem> = []
    for (const [index, message] of (line["messages"] as ReadonlyArray<unknown>).entries()) {
      const entry = message as Record<string, unknown> | null
      if (entry === null || typeof entry !== "object" || !isText(entry["content"])) {
        return `messages[${index}] needs a non-empty "content"`
      }
      const speaker = isText(entry["role"]) ? `${entry["role"]}: ` : isText(entry["name"]) ? `${entry["name"]}: ` : ""
      items.push({ ...passThrough(line), content: `${speaker}${entry["content"]}` })
    }
    return items
  }
  if (isText(line["speaker"]) && isText(line["text"])) {
    const diaId = isText(line["dia_id"]) ? { dia_id: line["dia_id"] } : {}
    return [{ ...passThrough(line), ...metadataWith(line, diaId), content: `${line["speaker"]}: ${line["text"]}` }]
  }
  if (isText(line["content"])) {
    const speaker = isText(line["role"]) ? `${line["role"]}: ` : ""
    return [{ ...passThrough(line), content: `${speaker}${line["content"]}` }]
  }
  return "expected \"content\", \"speaker\" + \"text\", or \"messages\""
}

/** The items of a JSONL text, or the list of refused lines (`line 7: ...`). */
export const conversationItems = (
  text: string
): { readonly items: ReadonlyArray<RetainItem>; readonly errors: ReadonlyArray<string> } => {
  const items: Array<RetainItem> = []
  const errors: Array<string> = []
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch (error) {
      errors.push(`line ${index + 1}: not valid JSON (${(error as Error).message})`)
      continue
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      errors.push(`line ${index + 1}: expected a JSON object`)
      continue
    }
    const result = lineItems(parsed as Record<string, unknown>)
    if (typeof result === "string") errors.push(`line ${index + 1}: ${result}`)
    else items.push(...result)
  }
  return { items, errors }
}

/**
 * A document keeps one text for all its items; when some of its chunks go with the memories they held, the text must
 * lose them too, or a forgotten or expired memory is read back through its document. The live document is rebuilt
 * from the chunks it keeps; a document row in repo history (which has no chunk table of its own to rebuild from) loses
 * the gone chunks' pieces where they appear in it.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import { notAllExpired } from "./Expiry.ts"

/**
 * The texts of the chunks of document `alias` (a `documents` alias) that pass `where` (on chunk alias `c`), in order,
 * joined by blank lines: the order of retain, then within one (an appended item's chunks are numbered from 0 again).
 */
export const joinedChunkTexts = (sql: SqlClient.SqlClient, alias: string, where?: Fragment) =>
  sql`(SELECT string_agg(c.text, E'\\n\\n' ORDER BY c.created_at, c.chunk_index) FROM chunks c
    WHERE c.bank_id = ${sql.literal(alias)}.bank_id AND c.document_id = ${sql.literal(alias)}.document_id
      ${where === undefined ? sql`` : sql`AND ${where}`})`

/**
 * A document's text as reads show it at `now` (`alias`: a `documents` alias): its stored `original_text`, unless one
 * of its chunks is gone from reads because every memory it holds has expired; then its other chunks' texts, so the
 * expired part is not read back through the whole (the sweep rewrites the stored text the same way when it deletes
 * the chunk, `rewriteDocumentTexts`).
 */
export const shownText = (sql: SqlClient.SqlClient, alias: string, now: Date) => {
  const document = sql.literal(alias)
  const hidden = sql`EXISTS (SELECT 1 FROM chunks hc WHERE hc.bank_id = ${document}.bank_id
    AND hc.document_id = ${document}.document_id AND NOT ${notAllExpired(sql, "hc", now, "chunk")})`
  return sql`(CASE WHEN ${hidden} THEN ${joinedChunkTexts(sql, alias, notAllExpired(sql, "c", now, "chunk"))}
    ELSE ${document}.original_text END)`
}

/**
 * After chunks of still-used documents were deleted with the memories they held (a forget, a sweep, a delete), each
 * such document's stored text becomes its remaining chunks' texts, in order: the deleted memories' source is not kept
 * in the whole. A document with a memory that names no chunk keeps its text (what that memory came from is not
 * known apart from the rest).
 */
export const rewriteDocumentTexts = (sql: SqlClient.SqlClient, bankId: string, documentIds: ReadonlyArray<string>) =>
  documentIds.length === 0 ? Effect.void : Effect.asVoid(sql`
    UPDATE documents d SET updated_at = now(), original_text = ${joinedChunkTexts(sql, "d")}
    WHERE d.bank_id = ${bankId} AND d.document_id IN ${sql.in([...new Set(documentIds)])}
      AND EXISTS (SELECT 1 FROM chunks c WHERE c.bank_id = d.bank_id AND c.document_id = d.document_id)
      AND NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.bank_id = d.bank_id AND u.document_id = d.document_id
        AND u.chunk_id IS NULL)`)

/**
 * `text` without the pieces of `goneChunks` (chunk texts). A chunk is its item's paragraphs or sentences, each trimmed,
 * joined by blank lines (`chunkText`), so each piece is found verbatim in the text its item added, and is removed
 * with the whitespace after it (or before it, at the end). A piece the text does not hold (a version of the document
 * from before that item was appended) is left alone.
 */
export const withoutChunkTexts = (text: string, goneChunks: ReadonlyArray<string>) => {
  let rest = text
  for (const chunk of goneChunks) {
    for (const piece of chunk.split("\n\n")) {
      const at = piece === "" ? -1 : rest.indexOf(piece)
      if (at < 0) continue
      let end = at + piece.length
      while (end < rest.length && /\s/.test(rest[end]!)) end++
      let start = at
      if (end === rest.length) { while (start > 0 && /\s/.test(rest[start - 1]!)) start-- }
      rest = rest.slice(0, start) + rest.slice(end)
    }
  }
  return rest
}

/**
 * DOCX to markdown: mammoth maps Word styles to semantic HTML (headings, lists, tables, emphasis), turndown
 * writes it as markdown. Pictures become their alt text, never inline base64, so a memory holds only words.
 */
import { Effect } from "effect"
import mammoth from "mammoth"
import { describeCause, type ParsedFile, ParserError } from "../FileParser.ts"
import { htmlToMarkdown } from "./HtmlMarkdown.ts"

// Word's own Title and Subtitle styles carry the document's name; mammoth would otherwise make them paragraphs.
const styleMap = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"]

const skipImage = mammoth.images.imgElement(() => Promise.resolve({ src: "" }))

export const docxToMarkdown = (bytes: Uint8Array): Effect.Effect<ParsedFile, ParserError> =>
  Effect.tryPromise({
    try: () =>
      mammoth.convertToHtml(
        { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
        { styleMap, convertImage: skipImage, externalFileAccess: false }
      ),
    catch: (cause) => ParserError.failed(`not a readable DOCX: ${describeCause(cause)}`)
  }).pipe(Effect.map((result) => ({ markdown: htmlToMarkdown(result.value) })))

/**
 * The tree-sitter runtime and its grammars, loaded once per thread (a worker or the main thread), and the parse
 * of a batch of source files into `FileParse` records. Plain promises: this runs inside worker threads, outside
 * any Effect runtime. A file whose parse throws is reported as failed; the others are unaffected.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import type { Language, Parser } from "web-tree-sitter"
import { grammarDirectory, grammarFiles, type ParsedLanguage } from "./Languages.ts"
import { extractSyntax, type FileParse } from "./SyntaxExtractor.ts"

export interface SourceFile {
  readonly path: string
  readonly language: ParsedLanguage
  readonly text: string
}

export type ParseOutcome =
  | { readonly path: string; readonly ok: true; readonly parse: FileParse }
  | { readonly path: string; readonly ok: false; readonly message: string }

let runtime: Promise<typeof import("web-tree-sitter")> | undefined
const languages = new Map<string, Promise<Language>>()
const parsers = new Map<ParsedLanguage, Parser>()

/** web-tree-sitter loads with the first parse: the server's own thread imports this module but parses on workers. */
const initRuntime = () => {
  runtime ??= import("web-tree-sitter").then((treeSitter) => treeSitter.Parser.init().then(() => treeSitter))
  return runtime
}

const grammar = (language: ParsedLanguage): Promise<Language> => {
  const file = grammarFiles[language]
  let loaded = languages.get(file)
  if (loaded === undefined) {
    loaded = initRuntime().then((treeSitter) =>
      readFile(join(grammarDirectory(), file)).then((bytes) => treeSitter.Language.load(bytes))
    )
    languages.set(file, loaded)
  }
  return loaded
}

const parserFor = async (language: ParsedLanguage): Promise<Parser> => {
  const existing = parsers.get(language)
  if (existing !== undefined) return existing
  const { Parser } = await initRuntime()
  const loaded = await grammar(language)
  const parser = parsers.get(language) ?? new Parser()
  parser.setLanguage(loaded)
  parsers.set(language, parser)
  return parser
}

/** Loads the runtime and every grammar now, so a later time limit covers only parsing. */
export const warmUp = async (): Promise<void> => {
  await Promise.all((Object.keys(grammarFiles) as Array<ParsedLanguage>).map(parserFor))
}

export const parseSource = async (file: SourceFile): Promise<ParseOutcome> => {
  try {
    const parser = await parserFor(file.language)
    const tree = parser.parse(file.text)
    if (tree === null) return { path: file.path, ok: false, message: "the parser gave no tree" }
    try {
      return { path: file.path, ok: true, parse: extractSyntax(tree, file.language) }
    } finally {
      tree.delete()
    }
  } catch (error) {
    return { path: file.path, ok: false, message: error instanceof Error ? error.message : String(error) }
  }
}

export const parseSources = async (files: ReadonlyArray<SourceFile>): Promise<Array<ParseOutcome>> => {
  const outcomes: Array<ParseOutcome> = []
  for (const file of files) outcomes.push(await parseSource(file))
  return outcomes
}

/** Only the tree-sitter parse, nothing extracted: the baseline `bench/codebase.ts` compares an import against. */
export const parseTreeOnly = async (file: SourceFile): Promise<void> => {
  const parser = await parserFor(file.language)
  parser.parse(file.text)?.delete()
}

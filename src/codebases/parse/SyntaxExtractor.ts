/**
 * Turns one parsed syntax tree into what a snapshot keeps of a file: symbols (kind, container, fully qualified
 * name, exportedness, lines, cyclomatic complexity), import specifiers and calls with their calling symbol. The
 * nodes any rule looks at are collected in document order by one call into the parser (`descendantsOfType`), not
 * by stepping a cursor through every node from JavaScript: each step crossed into WebAssembly, and the walk cost
 * more than the parse itself. No I/O, no resolution of imports against other files (that needs the whole
 * snapshot: see `SnapshotAssembly`).
 */
import type { Node, Tree } from "web-tree-sitter"
import type { ParsedLanguage } from "./Languages.ts"
import { booleanOperators, booleanTypes, classLikeKinds, decisionTypes, rules, type SymbolKind } from "./SyntaxRules.ts"

export interface ParsedSymbol {
  readonly name: string
  readonly kind: SymbolKind
  readonly container: string | null
  readonly fqName: string
  readonly exported: boolean
  readonly startLine: number
  readonly endLine: number
  complexity: number
}

export interface ParsedImport {
  readonly specifier: string
  /** The imported names (or the module) for display. */
  readonly label: string
}

export interface ParsedCall {
  readonly callee: string
  readonly line: number
  /** Index into `symbols` of the innermost enclosing symbol, or -1 at module level. */
  readonly caller: number
}

export interface FileParse {
  readonly symbols: Array<ParsedSymbol>
  readonly imports: Array<ParsedImport>
  readonly calls: Array<ParsedCall>
  /** True when the tree holds syntax errors (the parse is partial but still used). */
  readonly hasErrors: boolean
}

const identifierLike = /^[A-Za-z_$][\w$]*$/
const stringTypes = new Set([
  "string",
  "string_literal",
  "interpreted_string_literal",
  "raw_string_literal",
  "system_lib_string",
  "encapsed_string",
  "string_content"
])

const unquote = (text: string) => text.replace(/^[@rbuf]*["'`<]+/i, "").replace(/["'`>]+$/, "")

const firstString = (node: Node): string | null => {
  if (stringTypes.has(node.type)) return unquote(node.text)
  for (const child of node.namedChildren) {
    if (child === null) continue
    const found = firstString(child)
    if (found !== null) return found
  }
  return null
}

/** The declared name of a symbol node: its `name` field, or the identifier at the end of a C declarator chain. */
const nameOf = (node: Node): string | null => {
  const named = node.childForFieldName("name")
  if (named !== null) return named.text
  let declarator = node.childForFieldName("declarator")
  for (let hops = 0; declarator !== null && hops < 6; hops++) {
    if (
      /identifier$/.test(declarator.type) || declarator.type === "operator_name" ||
      declarator.type === "destructor_name"
    ) {
      const text = declarator.text
      return text.slice(text.lastIndexOf(":") + 1)
    }
    declarator = declarator.childForFieldName("declarator") ?? declarator.childForFieldName("name")
  }
  return null
}

/** A rust `impl X` or go method receiver names the container of the methods inside. */
const receiverOf = (node: Node): string | null => {
  const receiver = node.childForFieldName("receiver")
  if (receiver === null) return null
  const type = receiver.descendantsOfType("type_identifier")[0]
  return type?.text ?? null
}

const calleeOf = (node: Node, language: ParsedLanguage): string | null => {
  let target: Node | null = null
  if (language === "java") target = node.childForFieldName("name") ?? node.childForFieldName("type")
  else if (language === "ruby") target = node.childForFieldName("method")
  else if (language === "rust" && node.type === "macro_invocation") target = node.childForFieldName("macro")
  else {
    target = node.childForFieldName("function") ?? node.childForFieldName("constructor") ??
      node.childForFieldName("name") ?? node.childForFieldName("type")
  }
  for (let hops = 0; target !== null && hops < 4; hops++) {
    const text = target.text
    if (identifierLike.test(text)) return text
    target = target.childForFieldName("property") ?? target.childForFieldName("field") ??
      target.childForFieldName("attribute") ?? target.childForFieldName("name")
  }
  return null
}

/** Specifiers of an import-like node; empty when the node is not an import after all (a plain call). */
const importsOf = (node: Node, language: ParsedLanguage): Array<ParsedImport> => {
  switch (language) {
    case "typescript":
    case "tsx":
    case "javascript":
    case "jsx": {
      if (node.type === "call_expression") {
        const fn = node.childForFieldName("function")
        if (fn === null || (fn.text !== "require" && fn.type !== "import")) return []
        const spec = firstString(node.childForFieldName("arguments") ?? node)
        return spec === null ? [] : [{ specifier: spec, label: spec }]
      }
      const source = node.childForFieldName("source")
      if (source === null) return []
      const spec = unquote(source.text)
      const clause = node.namedChildren.find((child) =>
        child?.type === "import_clause" || child?.type === "export_clause"
      )
      return [{ specifier: spec, label: clause ? clause.text.replace(/\s+/g, " ").slice(0, 120) : spec }]
    }
    case "python": {
      if (node.type === "import_statement") {
        return node.namedChildren.filter((child) => child !== null).map((child) => {
          const name = child!.type === "aliased_import"
            ? child!.childForFieldName("name")?.text ?? child!.text
            : child!.text
          return { specifier: name, label: name }
        })
      }
      const module = node.childForFieldName("module_name")?.text ?? ""
      const names = node.namedChildren
        .filter((child) => child !== null && child.id !== node.childForFieldName("module_name")?.id)
        .map((child) => child!.type === "aliased_import" ? child!.childForFieldName("name")?.text ?? "" : child!.text)
        .filter((name) => name !== "")
      return [{ specifier: module, label: names.length > 0 ? names.join(", ") : module }]
    }
    case "ruby": {
      const method = node.childForFieldName("method")?.text
      if (method !== "require" && method !== "require_relative" && method !== "load") return []
      const spec = firstString(node.childForFieldName("arguments") ?? node)
      return spec === null ? [] : [{ specifier: method === "require_relative" ? `./${spec}` : spec, label: spec }]
    }
    case "go":
    case "c":
    case "cpp": {
      const spec = firstString(node)
      return spec === null ? [] : [{ specifier: spec, label: spec }]
    }
    case "php": {
      if (node.type === "namespace_use_clause") {
        return [{ specifier: node.text.split(/\s+as\s+/i)[0]!.trim(), label: node.text }]
      }
      const spec = firstString(node)
      return spec === null ? [] : [{ specifier: spec, label: spec }]
    }
    default: {
      // rust `use a::b::{c, d}`, java `import a.b.C;`, C# `using A.B;`: the path after the keyword.
      const text = node.text.replace(/^(pub\s+)?(use|import|using)\s+(static\s+)?/, "").replace(/;$/, "").trim()
      return [{ specifier: text, label: text }]
    }
  }
}

interface Scope {
  /** Where the scope's node ends: a later node starting there or after is outside it. */
  readonly endIndex: number
  /** Index into `symbols`, or -1 for a container without a symbol of its own (a rust `impl` block). */
  readonly symbol: number
  readonly fqName: string
  readonly classLike: boolean
}

/** Symbol kind of a node, refined by what it holds (go type specs, C struct uses without a body). */
const kindOf = (node: Node, base: SymbolKind, language: ParsedLanguage): SymbolKind | null => {
  if (language === "go" && node.type === "type_spec") {
    const type = node.childForFieldName("type")?.type
    return type === "struct_type" ? "class" : type === "interface_type" ? "interface" : "type"
  }
  if ((language === "c" || language === "cpp") && base !== "function" && node.childForFieldName("body") === null) {
    return null
  }
  return base
}

const valueKind = (value: Node | null): SymbolKind => {
  if (value === null) return "variable"
  if (/function|arrow_function|generator|lambda/.test(value.type)) return "function"
  if (value.type === "class") return "class"
  return "variable"
}

/** Names declared by a module-level declaration node (with the kind their value gives them). */
const declaredNames = (node: Node, language: ParsedLanguage): Array<{ name: string; kind: SymbolKind }> => {
  if (language === "python") {
    const assignment = node.namedChildren[0]
    if (assignment?.type !== "assignment") return []
    const left = assignment.childForFieldName("left")
    if (left === null) return []
    const ids = left.type === "identifier" ? [left] : left.descendantsOfType("identifier").filter((id) => id !== null)
    return ids.map((id) => ({ name: id!.text, kind: "variable" as const }))
  }
  const out: Array<{ name: string; kind: SymbolKind }> = []
  for (const child of node.namedChildren) {
    if (child === null) continue
    if (child.type === "variable_declarator" || child.type === "var_spec" || child.type === "const_spec") {
      const name = child.childForFieldName("name")
      if (name !== null && identifierLike.test(name.text)) {
        out.push({ name: name.text, kind: valueKind(child.childForFieldName("value")) })
      }
    }
  }
  if (language === "rust") {
    const name = node.childForFieldName("name")
    if (name !== null) out.push({ name: name.text, kind: "variable" })
  }
  return out
}

const moduleLevelParents = new Set(["program", "module", "source_file", "export_statement", "translation_unit"])

/** Per language, every node type a rule looks at. */
const watchedTypes = new Map<ParsedLanguage, Array<string>>()
const watchedTypesOf = (language: ParsedLanguage): Array<string> => {
  let types = watchedTypes.get(language)
  if (types === undefined) {
    const rule = rules[language]
    types = [
      ...new Set([
        ...Object.keys(rule.symbols),
        "impl_item",
        ...rule.variables,
        ...decisionTypes,
        ...booleanTypes,
        ...rule.imports,
        ...rule.calls
      ])
    ]
    watchedTypes.set(language, types)
  }
  return types
}

export const extractSyntax = (tree: Tree, language: ParsedLanguage): FileParse => {
  const rule = rules[language]
  const symbols: Array<ParsedSymbol> = []
  const imports: Array<ParsedImport> = []
  const calls: Array<ParsedCall> = []
  const scopes: Array<Scope> = []
  const seen = new Set<string>()

  const addSymbol = (node: Node, name: string, kind: SymbolKind, containerOverride: string | null = null): number => {
    const enclosing = scopes.length > 0 ? scopes[scopes.length - 1]! : undefined
    const parent = enclosing === undefined ? undefined : symbols[enclosing.symbol]
    const container = containerOverride ?? enclosing?.fqName ?? null
    const finalKind: SymbolKind = kind === "function" && (enclosing?.classLike === true || containerOverride !== null)
      ? "method"
      : kind
    const startLine = node.startPosition.row + 1
    const key = `${name}\u0000${finalKind}\u0000${startLine}`
    if (seen.has(key)) return -1
    seen.add(key)
    // Members of a class are as visible as the class, narrowed by their own modifiers where a language has them.
    const modifierLanguages = language === "java" || language === "csharp" || language === "php" ||
      language === "python"
    const exported = finalKind === "method" && parent !== undefined
      ? parent.exported && (!modifierLanguages || rule.exported(node, name))
      : rule.exported(node, name)
    symbols.push({
      name,
      kind: finalKind,
      container,
      fqName: container === null ? name : `${container}.${name}`,
      exported,
      startLine,
      endLine: node.endPosition.row + 1,
      complexity: 1
    })
    return symbols.length - 1
  }

  const innermostSymbol = (): number => {
    for (let index = scopes.length - 1; index >= 0; index--) {
      if (scopes[index]!.symbol >= 0) return scopes[index]!.symbol
    }
    return -1
  }

  // In document order: a node comes after every node that contains it, so the scopes still open are its ancestors.
  for (const node of tree.rootNode.descendantsOfType(watchedTypesOf(language))) {
    // Keywords share some names with node types (`if` in Ruby is a node, elsewhere a token): nodes only.
    if (!node.isNamed) continue
    const type = node.type
    while (scopes.length > 0 && scopes[scopes.length - 1]!.endIndex <= node.startIndex) scopes.pop()
    const base = rule.symbols[type]
    if (base !== undefined) {
      const kind = kindOf(node, base, language)
      const name = kind === null ? null : nameOf(node)
      if (kind !== null && name !== null && name !== "") {
        const index = addSymbol(node, name, kind, receiverOf(node))
        if (index >= 0) {
          scopes.push({
            endIndex: node.endIndex,
            symbol: index,
            fqName: symbols[index]!.fqName,
            classLike: classLikeKinds.has(kind)
          })
        }
      }
    } else if (type === "impl_item") {
      // Rust methods live in `impl Type { ... }`: a container scope without a symbol of its own.
      const name = node.childForFieldName("type")?.text
      if (name !== undefined) {
        const container = scopes.length > 0 ? `${scopes[scopes.length - 1]!.fqName}.` : ""
        scopes.push({
          endIndex: node.endIndex,
          symbol: -1,
          fqName: container + name.replace(/<.*$/, ""),
          classLike: true
        })
      }
    } else if (rule.variables.has(type) && scopes.length === 0) {
      if (node.parent !== null && moduleLevelParents.has(node.parent.type)) {
        const declared = declaredNames(node, language)
        const indexes = declared.map((entry) => addSymbol(node, entry.name, entry.kind))
        // A single declared name owns what its initializer calls (`export const layer = Layer.effect(...)`).
        if (declared.length === 1 && indexes[0]! >= 0) {
          scopes.push({
            endIndex: node.endIndex,
            symbol: indexes[0]!,
            fqName: symbols[indexes[0]!]!.fqName,
            classLike: false
          })
        }
      }
    }
    if (decisionTypes.has(type) || booleanTypes.has(type)) {
      const counts = !booleanTypes.has(type) || booleanOperators.has(node.childForFieldName("operator")?.text ?? "")
      const owner = innermostSymbol() === -1 ? undefined : symbols[innermostSymbol()]
      if (counts && owner !== undefined) owner.complexity += 1
    }
    if (rule.imports.has(type)) {
      for (const found of importsOf(node, language)) if (found.specifier !== "") imports.push(found)
    }
    if (rule.calls.has(type)) {
      const callee = calleeOf(node, language)
      if (callee !== null) calls.push({ callee, line: node.startPosition.row + 1, caller: innermostSymbol() })
    }
  }
  return { symbols, imports, calls, hasErrors: tree.rootNode.hasError }
}

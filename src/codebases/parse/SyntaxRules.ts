/**
 * Per-language tree-sitter node types: which nodes declare symbols (and of what kind), which are imports, which
 * are calls, and which add a branch to cyclomatic complexity. Data plus small accessors, read by `SyntaxExtractor`;
 * node type names are those of the grammars in `@vscode/tree-sitter-wasm`.
 */
import type { Node } from "web-tree-sitter"
import type { ParsedLanguage } from "./Languages.ts"

export type SymbolKind = "class" | "interface" | "function" | "method" | "type" | "enum" | "variable" | "module"

export interface LanguageRules {
  /** Node type → symbol kind. `function` becomes `method` inside a class-like container. */
  readonly symbols: Readonly<Record<string, SymbolKind>>
  /** Import-like node types; the extractor reads their specifiers with `importsOf`. */
  readonly imports: ReadonlySet<string>
  /** Call-like node types; `calleeOf` names the callee. */
  readonly calls: ReadonlySet<string>
  /** Module-level declarations whose declared names become `variable` (or function/class by their value). */
  readonly variables: ReadonlySet<string>
  readonly exported: (node: Node, name: string) => boolean
}

const set = (...types: ReadonlyArray<string>): ReadonlySet<string> => new Set(types)

/** Node types that add one path through a function (lizard-style cyclomatic complexity). */
export const decisionTypes = set(
  "if_statement",
  "elif_clause",
  "else_if_clause",
  "for_statement",
  "for_in_statement",
  "enhanced_for_statement",
  "foreach_statement",
  "while_statement",
  "do_statement",
  "catch_clause",
  "except_clause",
  "rescue",
  "conditional_expression",
  "ternary_expression",
  "switch_case",
  "case_statement",
  "switch_label",
  "expression_case",
  "type_case",
  "communication_case",
  "match_arm",
  "if_expression",
  "while_expression",
  "for_expression",
  "if",
  "elsif",
  "unless",
  "while",
  "until",
  "for",
  "when",
  "conditional",
  "if_clause",
  "switch_section",
  "case_clause",
  "if_modifier",
  "unless_modifier",
  "while_modifier",
  "until_modifier"
)
/** Binary nodes that add a branch when their operator is a short-circuit one. */
export const booleanTypes = set("binary_expression", "boolean_operator")
export const booleanOperators = set("&&", "||", "and", "or", "??")

const startsUpper = (name: string) => /^[A-Z]/.test(name)
const hasChildOfType = (node: Node, type: string) => node.children.some((child) => child?.type === type)
const modifiersText = (node: Node) =>
  node.children.filter((child) => child !== null && /modifier/.test(child.type)).map((child) => child!.text).join(" ")

/** True when the declaration sits inside an `export` statement (directly or through a declaration wrapper). */
const inExport = (node: Node): boolean => {
  let current: Node | null = node.parent
  for (let hops = 0; current !== null && hops < 3; hops++, current = current.parent) {
    if (current.type === "export_statement") return true
  }
  return false
}

const scriptRules: LanguageRules = {
  symbols: {
    function_declaration: "function",
    generator_function_declaration: "function",
    class_declaration: "class",
    abstract_class_declaration: "class",
    method_definition: "method",
    interface_declaration: "interface",
    type_alias_declaration: "type",
    enum_declaration: "enum",
    internal_module: "module"
  },
  imports: set("import_statement", "export_statement", "call_expression"),
  calls: set("call_expression", "new_expression"),
  variables: set("lexical_declaration", "variable_declaration"),
  exported: (node) => inExport(node)
}

export const rules: Readonly<Record<ParsedLanguage, LanguageRules>> = {
  typescript: scriptRules,
  tsx: scriptRules,
  javascript: scriptRules,
  jsx: scriptRules,
  python: {
    symbols: { class_definition: "class", function_definition: "function" },
    imports: set("import_statement", "import_from_statement"),
    calls: set("call"),
    variables: set("expression_statement"),
    exported: (_node, name) => !name.startsWith("_") || /^__\w+__$/.test(name)
  },
  go: {
    symbols: { function_declaration: "function", method_declaration: "method", type_spec: "type" },
    imports: set("import_spec"),
    calls: set("call_expression"),
    variables: set("var_declaration", "const_declaration"),
    exported: (_node, name) => startsUpper(name)
  },
  rust: {
    symbols: {
      function_item: "function",
      struct_item: "class",
      enum_item: "enum",
      trait_item: "interface",
      type_item: "type",
      mod_item: "module",
      union_item: "class"
    },
    imports: set("use_declaration"),
    calls: set("call_expression", "macro_invocation"),
    variables: set("const_item", "static_item"),
    exported: (node) => hasChildOfType(node, "visibility_modifier")
  },
  java: {
    symbols: {
      class_declaration: "class",
      interface_declaration: "interface",
      enum_declaration: "enum",
      record_declaration: "class",
      method_declaration: "method",
      constructor_declaration: "method"
    },
    imports: set("import_declaration"),
    calls: set("method_invocation", "object_creation_expression"),
    variables: set(),
    exported: (node) => /\bpublic\b/.test(modifiersText(node))
  },
  c: cppRules(),
  cpp: cppRules(),
  csharp: {
    symbols: {
      class_declaration: "class",
      interface_declaration: "interface",
      struct_declaration: "class",
      enum_declaration: "enum",
      record_declaration: "class",
      method_declaration: "method",
      constructor_declaration: "method",
      namespace_declaration: "module",
      file_scoped_namespace_declaration: "module"
    },
    imports: set("using_directive"),
    calls: set("invocation_expression", "object_creation_expression"),
    variables: set(),
    exported: (node) => /\b(public|internal)\b/.test(modifiersText(node))
  },
  ruby: {
    symbols: { class: "class", module: "module", method: "method", singleton_method: "method" },
    imports: set("call"),
    calls: set("call"),
    variables: set(),
    exported: () => true
  },
  php: {
    symbols: {
      class_declaration: "class",
      interface_declaration: "interface",
      trait_declaration: "interface",
      enum_declaration: "enum",
      function_definition: "function",
      method_declaration: "method",
      namespace_definition: "module"
    },
    imports: set(
      "namespace_use_clause",
      "require_expression",
      "require_once_expression",
      "include_expression",
      "include_once_expression"
    ),
    calls: set(
      "function_call_expression",
      "member_call_expression",
      "scoped_call_expression",
      "object_creation_expression"
    ),
    variables: set(),
    exported: (node) => !/\b(private|protected)\b/.test(modifiersText(node))
  }
}

function cppRules(): LanguageRules {
  return {
    symbols: {
      function_definition: "function",
      class_specifier: "class",
      struct_specifier: "class",
      enum_specifier: "enum",
      namespace_definition: "module",
      union_specifier: "class"
    },
    imports: set("preproc_include"),
    calls: set("call_expression"),
    variables: set(),
    exported: (node) => !/^static\b/.test(node.text)
  }
}

/** Kinds whose members are methods rather than free functions. */
export const classLikeKinds: ReadonlySet<SymbolKind> = new Set(["class", "interface", "enum"])

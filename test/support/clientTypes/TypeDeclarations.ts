/**
 * Reads the type declarations a hey-api generated client ships as source (`generated/types.gen.ts`) into a small
 * syntax tree, so tests can check JSON answers against the client's own types at run time. TypeScript 7 has no
 * compiler API in JavaScript, so this is a tokenizer and a recursive-descent parser for the regular subset that
 * generator writes (`export type Name = <type>;` with object types, unions, literals, `Array<T>`, index
 * signatures, `keyof` and indexed access); anything outside that subset is a parse error, never a silent pass.
 */

export type TypeNode =
  | {
    readonly kind: "keyword"
    readonly name: "string" | "number" | "boolean" | "null" | "unknown" | "never" | "any" | "undefined"
  }
  | { readonly kind: "literal"; readonly value: string | number | boolean }
  | { readonly kind: "template" }
  | { readonly kind: "reference"; readonly name: string; readonly args: ReadonlyArray<TypeNode> }
  | { readonly kind: "object"; readonly members: ReadonlyArray<Member>; readonly index: TypeNode | undefined }
  | { readonly kind: "union"; readonly options: ReadonlyArray<TypeNode> }
  | { readonly kind: "intersection"; readonly parts: ReadonlyArray<TypeNode> }
  | { readonly kind: "keyof"; readonly target: TypeNode }
  | { readonly kind: "indexed"; readonly target: TypeNode; readonly key: TypeNode }

export interface Member {
  readonly name: string
  readonly optional: boolean
  readonly type: TypeNode
}

type Token =
  | { readonly kind: "identifier"; readonly text: string; readonly at: number }
  | { readonly kind: "string"; readonly text: string; readonly at: number }
  | { readonly kind: "number"; readonly text: string; readonly at: number }
  | { readonly kind: "template"; readonly text: string; readonly at: number }
  | { readonly kind: "punctuation"; readonly text: string; readonly at: number }

const punctuation = new Set(["{", "}", "[", "]", "(", ")", "<", ">", "|", "&", ";", ":", "?", ",", "=", "."])

/** Splits the source into tokens; comments and whitespace are dropped. */
export const tokenize = (source: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (/\s/.test(c)) {
      i++
    } else if (source.startsWith("//", i)) {
      const end = source.indexOf("\n", i)
      i = end === -1 ? source.length : end
    } else if (source.startsWith("/*", i)) {
      const end = source.indexOf("*/", i + 2)
      if (end === -1) throw new Error(`unterminated comment at ${i}`)
      i = end + 2
    } else if (c === "\"" || c === "'") {
      let j = i + 1
      let text = ""
      while (j < source.length && source[j] !== c) {
        if (source[j] === "\\") j++
        text += source[j]
        j++
      }
      if (j >= source.length) throw new Error(`unterminated string at ${i}`)
      tokens.push({ kind: "string", text, at: i })
      i = j + 1
    } else if (c === "`") {
      // Template literal types (`${string}://${string}`) are only ever checked as strings.
      const end = source.indexOf("`", i + 1)
      if (end === -1) throw new Error(`unterminated template at ${i}`)
      tokens.push({ kind: "template", text: source.slice(i + 1, end), at: i })
      i = end + 1
    } else if (/[0-9-]/.test(c) && /[0-9]/.test(source[c === "-" ? i + 1 : i] ?? "")) {
      const match = /^-?[0-9]+(\.[0-9]+)?/.exec(source.slice(i))!
      tokens.push({ kind: "number", text: match[0], at: i })
      i += match[0].length
    } else if (/[A-Za-z_$]/.test(c)) {
      const match = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(source.slice(i))!
      tokens.push({ kind: "identifier", text: match[0], at: i })
      i += match[0].length
    } else if (punctuation.has(c)) {
      tokens.push({ kind: "punctuation", text: c, at: i })
      i++
    } else {
      throw new Error(`unexpected character ${JSON.stringify(c)} at ${i}`)
    }
  }
  return tokens
}

const keywords = new Set(["string", "number", "boolean", "null", "unknown", "never", "any", "undefined"])

class Parser {
  private position = 0
  private readonly tokens: ReadonlyArray<Token>
  constructor(tokens: ReadonlyArray<Token>) {
    this.tokens = tokens
  }

  declarations(): Map<string, TypeNode> {
    const declared = new Map<string, TypeNode>()
    while (this.position < this.tokens.length) {
      this.expect("export")
      this.expect("type")
      const name = this.identifier()
      this.expect("=")
      const type = this.type()
      this.expect(";")
      if (declared.has(name)) throw this.error(`type ${name} declared twice`)
      declared.set(name, type)
    }
    return declared
  }

  type(): TypeNode {
    this.accept("|") // a leading bar, as the generator writes multi-line unions
    const options = [this.intersection()]
    while (this.accept("|")) options.push(this.intersection())
    return options.length === 1 ? options[0]! : { kind: "union", options }
  }

  private intersection(): TypeNode {
    const parts = [this.postfix()]
    while (this.accept("&")) parts.push(this.postfix())
    return parts.length === 1 ? parts[0]! : { kind: "intersection", parts }
  }

  private postfix(): TypeNode {
    let type = this.primary()
    while (this.peek()?.text === "[") {
      this.position++
      if (this.accept("]")) {
        type = { kind: "reference", name: "Array", args: [type] }
      } else {
        const key = this.type()
        this.expect("]")
        type = { kind: "indexed", target: type, key }
      }
    }
    return type
  }

  private primary(): TypeNode {
    const token = this.next()
    switch (token.kind) {
      case "string":
        return { kind: "literal", value: token.text }
      case "number":
        return { kind: "literal", value: Number(token.text) }
      case "template":
        return { kind: "template" }
      case "punctuation":
        if (token.text === "(") {
          const inner = this.type()
          this.expect(")")
          return inner
        }
        if (token.text === "{") return this.objectBody()
        throw this.error(`unexpected ${token.text}`, token)
      case "identifier": {
        if (token.text === "true" || token.text === "false") return { kind: "literal", value: token.text === "true" }
        if (token.text === "keyof") return { kind: "keyof", target: this.postfix() }
        if (keywords.has(token.text)) return { kind: "keyword", name: token.text as "string" }
        const args: Array<TypeNode> = []
        if (this.accept("<")) {
          args.push(this.type())
          while (this.accept(",")) args.push(this.type())
          this.expect(">")
        }
        return { kind: "reference", name: token.text, args }
      }
    }
  }

  /** After `{`: members `name?: T;` and at most one index signature `[key: string]: T;`, up to `}`. */
  private objectBody(): TypeNode {
    const members: Array<Member> = []
    let index: TypeNode | undefined
    while (!this.accept("}")) {
      if (this.accept("[")) {
        this.identifier()
        this.expect(":")
        const key = this.type()
        if (!(key.kind === "keyword" && key.name === "string")) {
          throw this.error("only string index signatures are read")
        }
        this.expect("]")
        this.expect(":")
        index = this.type()
      } else {
        const token = this.next()
        if (token.kind === "punctuation" || token.kind === "template") throw this.error(`expected a member name`, token)
        const optional = this.accept("?")
        this.expect(":")
        members.push({ name: token.text, optional, type: this.type() })
      }
      if (!this.accept(";")) this.accept(",")
    }
    return { kind: "object", members, index }
  }

  private peek(): Token | undefined {
    return this.tokens[this.position]
  }

  private next(): Token {
    const token = this.tokens[this.position]
    if (token === undefined) throw new Error("unexpected end of declarations")
    this.position++
    return token
  }

  private accept(text: string): boolean {
    const token = this.peek()
    if (token !== undefined && token.text === text && (token.kind === "punctuation" || token.kind === "identifier")) {
      this.position++
      return true
    }
    return false
  }

  private expect(text: string): void {
    if (!this.accept(text)) throw this.error(`expected ${text}`)
  }

  private identifier(): string {
    const token = this.next()
    if (token.kind !== "identifier") throw this.error("expected a name", token)
    return token.text
  }

  private error(message: string, token: Token | undefined = this.peek()): Error {
    return new Error(
      `${message} at offset ${token?.at ?? "end"} (found ${token === undefined ? "end" : JSON.stringify(token.text)})`
    )
  }
}

/** Every `export type` of the source, by name. Throws on anything outside the generator's regular subset. */
export const parseDeclarations = (source: string): Map<string, TypeNode> => new Parser(tokenize(source)).declarations()

/** One type expression on its own (for tests of the checker). */
export const parseType = (source: string): TypeNode => new Parser(tokenize(source)).type()

/**
 * Checks a JSON value against a type of a generated client (parsed by `TypeDeclarations.ts`) and lists every
 * mismatch with its JSON path: a required field missing, a wrong primitive, null where the type does not allow it,
 * a bad array element, a literal outside its union. Fields the type does not name are allowed (older clients drop
 * unknown fields), so this checks what a client reads, not what the server may add.
 */
import type { TypeNode } from "./TypeDeclarations.ts"

export interface Mismatch {
  readonly path: string
  readonly message: string
}

const describe = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : `${typeof value} ${JSON.stringify(value)}`

const show = (type: TypeNode): string => {
  switch (type.kind) {
    case "keyword":
      return type.name
    case "literal":
      return JSON.stringify(type.value)
    case "template":
      return "string"
    case "reference":
      return type.args.length === 0 ? type.name : `${type.name}<${type.args.map(show).join(", ")}>`
    case "object":
      return "object"
    case "union":
      return type.options.map(show).join(" | ")
    case "intersection":
      return type.parts.map(show).join(" & ")
    case "keyof":
      return `keyof ${show(type.target)}`
    case "indexed":
      return `${show(type.target)}[${show(type.key)}]`
  }
}

const memberPath = (path: string, name: string) =>
  /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`

/** The broad JSON shape a type accepts, to pick which union option a wrong value was meant to be. */
const shapeOf = (value: unknown) => value === null ? "null" : Array.isArray(value) ? "array" : typeof value

export class TypeChecker {
  private readonly declarations: ReadonlyMap<string, TypeNode>
  /** Declared types some value was checked against: what a test has actually exercised. */
  readonly visited = new Set<string>()
  constructor(declarations: ReadonlyMap<string, TypeNode>) {
    this.declarations = declarations
  }

  /** The type declared under `name`; throws for a name the client does not declare. */
  declared(name: string): TypeNode {
    const type = this.declarations.get(name)
    if (type === undefined) throw new Error(`the client declares no type ${name}`)
    return type
  }

  /** Every mismatch of `value` against the declared type `name` (empty when it conforms). */
  check(name: string, value: unknown, path = "$"): Array<Mismatch> {
    return this.checkType(this.declared(name), value, path)
  }

  checkType(type: TypeNode, value: unknown, path: string): Array<Mismatch> {
    const wrong = (
      expected: string
    ): Array<Mismatch> => [{ path, message: `expected ${expected}, got ${describe(value)}` }]
    switch (type.kind) {
      case "keyword":
        switch (type.name) {
          case "unknown":
          case "any":
            return []
          case "never":
          case "undefined":
            return wrong(type.name)
          case "null":
            return value === null ? [] : wrong("null")
          default:
            if (value === null) return [{ path, message: `null where ${type.name} is required` }]
            return typeof value === type.name ? [] : wrong(type.name)
        }
      case "literal":
        return value === type.value ? [] : wrong(JSON.stringify(type.value))
      case "template":
        return typeof value === "string" ? [] : wrong("string")
      case "reference":
        return this.checkReference(type.name, type.args, value, path)
      case "object":
        return this.checkObject(type, value, path)
      case "union":
        return this.checkUnion(type.options, value, path)
      case "intersection":
        return type.parts.flatMap((part) =>
          // `string & {}` (the generator's "any string") — `{}` alone means "not null".
          part.kind === "object" && part.members.length === 0 && part.index === undefined
            ? (value === null || value === undefined ? wrong("a value") : [])
            : this.checkType(part, value, path)
        )
      case "keyof":
      case "indexed":
        return this.checkType(this.resolve(type), value, path)
    }
  }

  /** `keyof T` as the union of T's member names, `T[K]` as the union of the named members' types. */
  resolve(type: TypeNode): TypeNode {
    if (type.kind === "reference" && type.args.length === 0 && this.declarations.has(type.name)) {
      return this.resolve(this.declared(type.name))
    }
    if (type.kind === "keyof") {
      const target = this.resolve(type.target)
      if (target.kind !== "object") throw new Error(`keyof of a non-object type ${show(target)}`)
      return {
        kind: "union",
        options: target.members.map((member) => ({
          kind: "literal",
          value: /^[0-9]+$/.test(member.name) ? Number(member.name) : member.name
        }))
      }
    }
    if (type.kind === "indexed") {
      const target = this.resolve(type.target)
      const key = this.resolve(type.key)
      if (target.kind !== "object") throw new Error(`indexed access into a non-object type ${show(target)}`)
      const keys = key.kind === "union" ? key.options : [key]
      const options = keys.map((k) => {
        const member = k.kind === "literal" ? target.members.find((m) => m.name === String(k.value)) : undefined
        if (member === undefined) throw new Error(`no member ${show(k)} in ${show(type.target)}`)
        return member.type
      })
      return options.length === 1 ? options[0]! : { kind: "union", options }
    }
    return type
  }

  /** The declared types a type refers to, directly or through others (itself excluded unless recursive). */
  reachable(type: TypeNode, into: Set<string> = new Set()): Set<string> {
    const walk = (node: TypeNode): void => {
      switch (node.kind) {
        case "reference":
          node.args.forEach(walk)
          if (this.declarations.has(node.name) && !into.has(node.name)) {
            into.add(node.name)
            walk(this.declared(node.name))
          }
          return
        case "object":
          node.members.forEach((member) => walk(member.type))
          if (node.index !== undefined) walk(node.index)
          return
        case "union":
          return node.options.forEach(walk)
        case "intersection":
          return node.parts.forEach(walk)
        case "keyof":
          return walk(node.target)
        case "indexed":
          return walk(this.resolve(node))
        default:
          return
      }
    }
    walk(type)
    return into
  }

  private checkReference(name: string, args: ReadonlyArray<TypeNode>, value: unknown, path: string): Array<Mismatch> {
    if (name === "Array" && args.length === 1) {
      if (value === null) return [{ path, message: "null where an array is required" }]
      if (!Array.isArray(value)) return [{ path, message: `expected an array, got ${describe(value)}` }]
      return value.flatMap((element, i) => this.checkType(args[0]!, element, `${path}[${i}]`))
    }
    if (name === "Record" && args.length === 2) {
      return this.checkObject({ kind: "object", members: [], index: args[1] }, value, path)
    }
    if (args.length === 0 && this.declarations.has(name)) {
      const mismatches = this.checkType(this.declared(name), value, path)
      // Only a real value that conforms counts as exercising the type (not a null tried against `Foo | null`).
      if (mismatches.length === 0 && value !== null && value !== undefined) this.visited.add(name)
      return mismatches
    }
    // Blob, File and other runtime classes never come back as JSON.
    return [{ path, message: `${name} cannot be checked in JSON (got ${describe(value)})` }]
  }

  private checkObject(type: Extract<TypeNode, { kind: "object" }>, value: unknown, path: string): Array<Mismatch> {
    if (value === null) return [{ path, message: "null where an object is required" }]
    if (typeof value !== "object" || Array.isArray(value)) {
      return [{ path, message: `expected an object, got ${describe(value)}` }]
    }
    const record = value as Record<string, unknown>
    const named = new Set(type.members.map((member) => member.name))
    const mismatches: Array<Mismatch> = []
    for (const member of type.members) {
      const memberAt = memberPath(path, member.name)
      if (!Object.hasOwn(record, member.name)) {
        if (!member.optional) {
          mismatches.push({ path: memberAt, message: `required field missing (${show(member.type)})` })
        }
        continue
      }
      mismatches.push(...this.checkType(member.type, record[member.name], memberAt))
    }
    if (type.index !== undefined) {
      for (const [key, field] of Object.entries(record)) {
        if (!named.has(key)) mismatches.push(...this.checkType(type.index, field, memberPath(path, key)))
      }
    }
    return mismatches
  }

  private checkUnion(options: ReadonlyArray<TypeNode>, value: unknown, path: string): Array<Mismatch> {
    const attempts = options.map((option) => this.checkType(option, value, path))
    if (attempts.some((mismatches) => mismatches.length === 0)) return []
    const resolved = options.map((option) => this.resolve(option))
    if (resolved.every((option) => option.kind === "literal")) {
      return [{ path, message: `${describe(value)} is not one of ${resolved.map(show).join(", ")}` }]
    }
    if (value === null) return [{ path, message: `null where ${options.map(show).join(" | ")} is required` }]
    // The option of the value's own shape (the object of `Foo | null`) says best what is wrong with it.
    const sameShape = attempts.filter((_, i) => this.acceptsShape(resolved[i]!, shapeOf(value)))
    if (sameShape.length > 0) return sameShape.reduce((best, next) => next.length < best.length ? next : best)
    return [{ path, message: `expected ${options.map(show).join(" | ")}, got ${describe(value)}` }]
  }

  private acceptsShape(type: TypeNode, shape: string): boolean {
    switch (type.kind) {
      case "keyword":
        return type.name === shape || type.name === "unknown" || type.name === "any"
      case "literal":
        return typeof type.value === shape
      case "template":
        return shape === "string"
      case "object":
        return shape === "object"
      case "reference":
        return type.name === "Array" ? shape === "array" : type.name === "Record" ? shape === "object" : false
      case "union":
        return type.options.some((option) => this.acceptsShape(this.resolve(option), shape))
      case "intersection":
        return type.parts.every((part) => this.acceptsShape(this.resolve(part), shape))
      default:
        return false
    }
  }
}

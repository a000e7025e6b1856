/**
 * Bad inputs derived from the client's own request types and a valid call's options: a required body member
 * left out, one body member of the wrong type (everything else valid, so the refusal can only be about it), and a
 * required query parameter left out. Members typed `unknown` cannot be made wrong and are never picked.
 */
import { checker, type SdkOperation } from "./HindsightClientTypes.ts"
import type { Member, TypeNode } from "./TypeDeclarations.ts"

export interface BadInput {
  readonly label: string
  /** The member the refusal should name. */
  readonly field: string
  readonly options: Record<string, unknown>
}

const absent = Symbol("absent")

/** A JSON value the type does not accept, or `absent` when every value passes (`unknown`). */
const wrongValueFor = (node: TypeNode): unknown => {
  const type = checker.resolve(node)
  switch (type.kind) {
    case "keyword":
      return type.name === "string"
        ? 12345
        : type.name === "number"
        ? "not a number"
        : type.name === "boolean"
        ? "not a boolean"
        : absent
    case "literal":
      return typeof type.value === "string" ? 12345 : "not a literal"
    case "template":
      return 12345
    case "reference":
      return type.name === "Array" ? "not an array" : absent
    case "object":
      return "not an object"
    case "union": {
      const options = type.options.map((option) => checker.resolve(option))
      if (options.every((option) => option.kind === "literal")) return "not-one-of-the-literals"
      for (const option of options) {
        if (option.kind === "keyword" && option.name === "null") continue
        const wrong = wrongValueFor(option)
        if (wrong !== absent && checker.checkType(type, wrong, "$").length > 0) return wrong
      }
      return absent
    }
    default:
      return absent
  }
}

const membersOf = (
  data: TypeNode,
  part: "body" | "query"
): { readonly members: ReadonlyArray<Member>; readonly declared: boolean } => {
  const resolved = checker.resolve(data)
  if (resolved.kind !== "object") return { members: [], declared: false }
  const member = resolved.members.find((m) => m.name === part)
  if (member === undefined) return { members: [], declared: false }
  const type = checker.resolve(member.type)
  const object = type.kind === "union"
    ? type.options.map((o) => checker.resolve(o)).find((o) => o.kind === "object")
    : type
  if (object === undefined || object.kind !== "object") return { members: [], declared: false }
  return { members: object.members, declared: true }
}

export const badInputsFor = (
  operation: SdkOperation,
  valid: Record<string, unknown>,
  multipart: boolean
): Array<BadInput> => {
  const data = checker.declared(`${operation.typeBase}Data`)
  const body = membersOf(data, "body")
  const query = membersOf(data, "query")
  const validBody = (valid["body"] ?? {}) as Record<string, unknown>
  const validQuery = (valid["query"] ?? {}) as Record<string, unknown>
  const inputs: Array<BadInput> = []
  const required = body.members.find((m) => !m.optional)
  if (required !== undefined) {
    const { [required.name]: _, ...rest } = validBody
    inputs.push({
      label: `body without required ${required.name}`,
      field: required.name,
      options: { ...valid, body: rest }
    })
  }
  if (!multipart) {
    // The member the valid call sent first, else the first the type names, that a wrong value exists for.
    const candidates = [...body.members].sort((a, b) => Number(!(b.name in validBody)) - Number(!(a.name in validBody)))
    const target = candidates.find((m) => wrongValueFor(m.type) !== absent)
    if (target !== undefined) {
      inputs.push({
        label: `body.${target.name} = ${JSON.stringify(wrongValueFor(target.type))}`,
        field: target.name,
        options: { ...valid, body: { ...validBody, [target.name]: wrongValueFor(target.type) } }
      })
    }
  }
  const requiredQuery = query.members.find((m) => !m.optional)
  if (requiredQuery !== undefined) {
    const { [requiredQuery.name]: _, ...rest } = validQuery
    inputs.push({
      label: `query without required ${requiredQuery.name}`,
      field: requiredQuery.name,
      options: { ...valid, query: rest }
    })
  }
  return inputs
}

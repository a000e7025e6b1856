/**
 * The published Hindsight client's own contract, read from the generated sources it ships: its types (for the
 * `TypeChecker`) and, for each SDK function, the HTTP method, path and the names of its request and response
 * types. Read once per test file; nothing here talks to a server.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { TypeChecker } from "./TypeChecker.ts"
import { parseDeclarations, type TypeNode } from "./TypeDeclarations.ts"

const generated = join(
  dirname(createRequire(import.meta.url).resolve("@vectorize-io/hindsight-client")),
  "..",
  "generated"
)

export interface SdkOperation {
  /** The SDK function's name (`recallMemories`). */
  readonly name: string
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  /** The base of its `<Base>Data` / `<Base>Responses` types (`RecallMemories`). */
  readonly typeBase: string
}

export const declarations: ReadonlyMap<string, TypeNode> = parseDeclarations(
  readFileSync(join(generated, "types.gen.ts"), "utf8")
)

export const checker = new TypeChecker(declarations)

/** Each `export const name = (options: Options<BaseData, …>) => client.get<BaseResponses, …>({ url: "…" })`. */
export const sdkOperations: ReadonlyArray<SdkOperation> = readFileSync(join(generated, "sdk.gen.ts"), "utf8")
  .split(/^export const /m)
  .slice(1)
  .map((block) => {
    const name = /^(\w+)/.exec(block)?.[1]
    const typeBase = /Options<(\w+)Data\b/.exec(block)?.[1]
    const method = /\.(get|post|put|patch|delete)</.exec(block)?.[1]
    const path = /url: "([^"]+)"/.exec(block)?.[1]
    if (name === undefined || typeBase === undefined || method === undefined || path === undefined) {
      throw new Error(`cannot read the SDK function ${block.slice(0, 80)}`)
    }
    return { name, typeBase, method: method.toUpperCase() as SdkOperation["method"], path }
  })

/** The 2xx answers the client declares for an operation, by status (`{ 200: "RecallResponse" node }`). */
export const successTypes = (operation: SdkOperation): ReadonlyMap<number, TypeNode> => {
  const responses = checker.resolve(checker.declared(`${operation.typeBase}Responses`))
  if (responses.kind !== "object") throw new Error(`${operation.typeBase}Responses is not an object type`)
  return new Map(responses.members.filter((m) => /^2[0-9][0-9]$/.test(m.name)).map((m) => [Number(m.name), m.type]))
}

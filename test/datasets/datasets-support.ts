/** Helpers shared by the dataset-curation HTTP tests: requests, dataset creation, JSONL import, export checks. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestServer } from "../support/TestServer.ts"

export const taste = (bankId: string) => `/v1/default/banks/${bankId}/forge/taste`

export const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

export const createDataset = (bankId: string, schemaType: string, tags: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const created = yield* request("POST", `${taste(bankId)}/datasets`, {
      name: `${schemaType} set`,
      schema_type: schemaType,
      taste_tags: tags
    })
    assert.strictEqual(created.status, 200, created.text)
    return created.body.id as string
  })

export const importJsonl = (bankId: string, datasetId: string, rows: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const imported = yield* request("POST", `${taste(bankId)}/datasets/${datasetId}/sets`, {
      jsonl: rows.map((row) => JSON.stringify(row)).join("\n") + "\n"
    })
    assert.strictEqual(imported.status, 200, imported.text)
    assert.strictEqual(imported.body.imported_count, rows.length)
    return imported.body.sets as Array<any>
  })

const roles = ["system", "user", "assistant", "tool"]

/** Every line is JSON `{messages}` with known roles and non-empty content; answers the parsed lines. */
export const checkChatLines = (content: string): Array<any> => {
  assert.isTrue(content === "" || content.endsWith("\n"), "JSONL ends with a newline")
  const lines = content.split("\n").filter((line) => line !== "")
  return lines.map((line, index) => {
    const parsed = JSON.parse(line)
    assert.deepStrictEqual(Object.keys(parsed), ["messages"], `line ${index + 1} has only messages`)
    assert.isAbove(parsed.messages.length, 0, `line ${index + 1} has messages`)
    for (const message of parsed.messages) {
      assert.include(roles, message.role, `line ${index + 1} role`)
      assert.isString(message.content)
      assert.isAbove(message.content.trim().length, 0, `line ${index + 1} content`)
    }
    assert.notInclude(line, "set_0", `line ${index + 1} carries no set key turn`)
    return parsed
  })
}

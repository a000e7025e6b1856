/**
 * What the memory-repo SIGKILL tests (`test/process/repo-*-kill.test.ts`) share: the service's environment, a JSON
 * call that fails on any non-2xx, a bank's memory ids as one comparable string, and batches of distinct facts.
 */
import { Effect } from "effect"
import { freshServiceEnv } from "./TestDatabase.ts"

export const repoServiceEnv = () => freshServiceEnv({ SERVICE_API_ENABLE_OBSERVATIONS: "false" })

export const call = (url: string, method: string, path: string, json?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method,
      ...(json === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(json) })
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`)
    return JSON.parse(text) as any
  })

/** The bank's memory ids, sorted and joined: equal strings mean the same memories. */
export const memoryIds = (url: string, bank: string) =>
  Effect.map(
    call(url, "GET", `/v1/default/banks/${bank}/memories/list?limit=1000`),
    (page) => page.items.map((item: any) => item.id).sort().join(",")
  )

export const facts = (tag: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => ({ content: `Batch ${tag} fact ${i}: sensor ${i} in hall ${tag} reads ${i * 7} units.` })
  )

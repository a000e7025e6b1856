/**
 * A bank seeded over HTTP the way an agent fills one (conversation turns retained 100 at a time), left until its
 * background work (consolidation) is done, and timed sequential recalls on it: what `bench/dreams.ts` and
 * `bench/recall-tail.ts` measure against.
 */
import { turnAt } from "./Conversation.ts"
import { json, send } from "./LoadClient.ts"

export const waitFor = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Retains `memories` conversation turns into `bank` (a `/v1/default/banks/{id}` path), then waits for its operations. */
export const seedOverHttp = async (url: string, bank: string, memories: number) => {
  for (let start = 0; start < memories; start += 100) {
    const items = Array.from(
      { length: Math.min(100, memories - start) },
      (_, i) => ({ content: turnAt(5, start + i).content })
    )
    await json(url, { method: "POST", path: `${bank}/memories`, body: JSON.stringify({ items }) })
  }
  await backgroundDone(url, bank)
}

/** Waits until `bank` (a `/v1/default/banks/{id}` path) has no pending or running operation (consolidation). */
export const backgroundDone = (url: string, bank: string, timeoutMs = 600_000) =>
  waitFor("the bank's background work", async () => {
    const listed = await json(url, { method: "GET", path: `${bank}/operations` })
    return !listed.operations.some((op: any) => op.status === "pending" || op.status === "running")
  }, timeoutMs)

/** One recall per question, each after the previous answered; the latencies in milliseconds. */
export const timedRecalls = async (url: string, bank: string, questions: ReadonlyArray<string>) => {
  const times: Array<number> = []
  for (const query of questions) {
    const answer = await send(url, { method: "POST", path: `${bank}/memories/recall`, body: JSON.stringify({ query }) })
    if (answer.status !== 200) throw new Error(`recall answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    times.push(answer.ms)
  }
  return times
}

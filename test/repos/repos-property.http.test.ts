/**
 * Memory repos, a property over random histories (seeded, so a failure replays): retains, direct deletes and
 * updates (cascades included: a memory's links and entity rows, an entity's unit rows), commits, branches from
 * the workspace or a commit, checkouts and forced hard resets. After every step, each branch's working tree is
 * compared with what it must be — the commit it was reset to or made, plus its own uncommitted changes — by
 * hashing every versioned row of the bank (the full-scan capture, independent of the dirty log that status and
 * commit now use); status must say dirty exactly when that differs from HEAD; a commit's tree must equal the
 * full hash of the bank; and a `branch_name` read of each parked branch must list exactly its memories.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { enableTuning } from "../../src/repos/SlicedEnable.ts"
import { Snapshots } from "../../src/repos/Snapshots.ts"
import { settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bankId = "repo-prop"
const bank = `/v1/default/banks/${bankId}`

/** A small deterministic PRNG (mulberry32): the same seed replays the same history. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const people = ["Ada", "Boris", "Chloe", "Dmitri", "Elena", "Farid"]
const places = ["Oslo", "Porto", "Quito", "Riga", "Seoul", "Tunis"]
const things = ["violin", "kayak", "telescope", "orchard", "bakery", "lighthouse"]

interface Expected {
  readonly rootHash: string
  readonly texts: ReadonlyArray<string>
}

layer(testApp(), { excludeTestServices: true })("memory repos: random histories", (it) => {
  it.effect(
    "every branch holds its commit plus its own uncommitted changes, whatever the order of operations",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const snapshots = yield* Snapshots
        const random = prng(Number(process.env["REPO_PROPERTY_SEED"] ?? 20261127))
        const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(random() * list.length)]!
        const ok = (method: string, path: string, json?: unknown) =>
          Effect.map(server.request(method, path, json === undefined ? {} : { json }), (response) => {
            assert.strictEqual(response.status, 200, `${method} ${path}: ${response.text}`)
            return response.body as any
          })

        /** The bank's state by the full-scan hash of every versioned row, and its memories' texts. */
        const observe = Effect.gen(function*() {
          const capture = yield* snapshots.capture({ bankId, workspace: false }, false)
          const texts = (yield* sql<{ text: string }>`SELECT text FROM memory_units WHERE bank_id = ${bankId}`)
            .map((row) => row.text).sort()
          return { rootHash: capture.rootHash, texts } satisfies Expected
        })
        const retain = (count: number) =>
          Effect.gen(function*() {
            const items = Array.from({ length: count }, () => ({
              content: `${pick(people)} visited the ${pick(things)} in ${pick(places)} on day ${
                Math.floor(random() * 1000)
              }.`
            }))
            yield* ok("POST", `${bank}/memories`, { items })
            yield* settled(bankId)
          })

        yield* ok("PUT", bank, { name: bankId })
        yield* retain(6)
        // The first enable in many tiny slices (rows in sevens, five top buckets at a time): its tree must be the
        // full hash of the bank all the same.
        const tuning = { ...enableTuning }
        Object.assign(enableTuning, { sliceRows: 7, sliceBuckets: 5 })
        const repo = yield* ok("POST", `${bank}/repos/enable`, {}).pipe(
          Effect.ensuring(Effect.sync(() => Object.assign(enableTuning, tuning)))
        )
        const repoId = repo.repo_id as string
        const initial = yield* ok("GET", `/v1/default/repos/${repoId}/log`)
        assert.strictEqual(
          initial.commits[0].root_manifest_hash,
          (yield* observe).rootHash,
          "the sliced initial commit"
        )
        const staged = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM repo_enable_rows WHERE repo_id = ${repoId}`
        assert.strictEqual(staged[0]!.n, 0)
        const commits = new Map<string, Expected>([[repo.head_commit_id, yield* observe]])
        /** Each branch's head and the working tree it must hold. */
        const branches = new Map<string, { head: string; working: Expected }>([
          ["main", { head: repo.head_commit_id, working: yield* observe }]
        ])
        let active = "main"
        let made = 0

        const check = (step: string) =>
          Effect.gen(function*() {
            const now = yield* observe
            const mine = branches.get(active)!
            assert.strictEqual(
              now.rootHash,
              mine.working.rootHash,
              `${step}: the active branch '${active}' holds another state`
            )
            const status = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
            assert.strictEqual(status.dirty, now.rootHash !== commits.get(mine.head)!.rootHash, `${step}: status.dirty`)
            for (const [name, branch] of branches) {
              if (name === active) continue
              const listed = yield* ok("GET", `${bank}/memories/list?branch_name=${name}&limit=1000`)
              const texts = (listed.items as Array<{ text: string }>).map((item) => item.text).sort()
              assert.deepStrictEqual(texts, branch.working.texts, `${step}: a branch_name read of '${name}'`)
              const parked = yield* ok("GET", `/v1/default/repos/${repoId}/status?branch_name=${name}`)
              assert.strictEqual(
                parked.dirty,
                branch.working.rootHash !== commits.get(branch.head)!.rootHash,
                `${step}: '${name}' dirty`
              )
            }
          })

        for (let step = 0; step < 24; step++) {
          const roll = random()
          const mine = branches.get(active)!
          let label: string
          if (roll < 0.25) {
            label = "retain"
            yield* retain(1 + Math.floor(random() * 2))
          } else if (roll < 0.35) {
            label = "delete a memory (its links and entity rows cascade)"
            yield* sql`DELETE FROM memory_units WHERE id = (
            SELECT id FROM memory_units WHERE bank_id = ${bankId} ORDER BY md5(id || ${String(step)}) LIMIT 1)`
          } else if (roll < 0.42) {
            label = "delete an entity (its unit rows cascade)"
            yield* sql`DELETE FROM entities WHERE id = (
            SELECT id FROM entities WHERE bank_id = ${bankId} ORDER BY md5(id || ${String(step)}) LIMIT 1)`
          } else if (roll < 0.5) {
            label = "update a memory"
            yield* sql`UPDATE memory_units SET text = text || ' (edited)' WHERE id = (
            SELECT id FROM memory_units WHERE bank_id = ${bankId} ORDER BY md5(id || ${String(step)}) LIMIT 1)`
          } else if (roll < 0.65) {
            label = "commit"
            const committed = yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: `step ${step}` })
            const now = yield* observe
            if (committed.created) {
              assert.strictEqual(
                committed.root_manifest_hash,
                now.rootHash,
                `step ${step}: the commit's tree is the bank's`
              )
              commits.set(committed.commit_id, now)
            } else {
              assert.strictEqual(
                now.rootHash,
                commits.get(mine.head)!.rootHash,
                `step ${step}: a commit refused a change`
              )
            }
            branches.set(active, { head: committed.commit_id, working: now })
          } else if (roll < 0.77) {
            const name = `b${made++}`
            const fromCommit = random() < 0.4 ? pick([...commits.keys()]) : undefined
            label = fromCommit === undefined ? `branch ${name} from the workspace` : `branch ${name} from a commit`
            yield* ok("POST", `/v1/default/repos/${repoId}/branches`, {
              branch_name: name,
              ...(fromCommit === undefined ? {} : { from_commit_id: fromCommit })
            })
            branches.set(
              name,
              fromCommit === undefined
                ? { head: mine.head, working: yield* observe }
                : { head: fromCommit, working: commits.get(fromCommit)! }
            )
          } else if (roll < 0.92) {
            const others = [...branches.keys()].filter((name) => name !== active)
            if (others.length === 0) continue
            const target = pick(others)
            label = `checkout ${target}`
            branches.set(active, { head: mine.head, working: yield* observe })
            yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: target })
            active = target
          } else {
            const target = pick([...commits.keys()])
            label = "hard reset"
            yield* ok("POST", `/v1/default/repos/${repoId}/reset-hard`, { commit_id: target, force: true })
            branches.set(active, { head: target, working: commits.get(target)! })
          }
          // Writes change the active working tree; the model follows what the bank now holds after them.
          if (label.startsWith("retain") || label.startsWith("delete") || label.startsWith("update")) {
            branches.set(active, { head: mine.head, working: yield* observe })
          }
          yield* check(`step ${step} (${label})`)
        }
      }),
    600_000
  )
})

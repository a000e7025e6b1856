/**
 * The in-memory keyword index against the SQL strategy on the same bank, on the real database tier: both read
 * PostgreSQL's lexemes and score BM25 the same way, so they must return the same memories in the same order.
 * Then the index's freshness: memories retained after it was built are found at once, and after their document is
 * deleted they are no longer returned.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { keywordInMemory } from "../../../../src/memory/recall/keyword/KeywordSearch.ts"
import { corpusStatistics, keyword } from "../../../../src/memory/recall/Strategies.ts"
import { tagMatcher } from "../../../../src/memory/recall/TagMatch.ts"
import { tagScope } from "../../../../src/memory/recall/TagFilter.ts"
import type { TagGroup, TagsMatch } from "../../../../src/domain/Recall.ts"
import { testApp, TestServer } from "../../../support/TestServer.ts"

const facts = [
  "Melanie painted a sunrise over the lake last summer.",
  "Melanie and her kids went camping near the lake.",
  "Caroline researched adoption agencies for months.",
  "Caroline went to an LGBTQ support group meeting.",
  "The support group helped Caroline feel accepted.",
  "Jon lost his job as a banker and opened a dance studio.",
  "Gina started an online clothing store after losing her job.",
  "Jon and Gina both love dancing; dance is their stress relief.",
  "我每天早上都喝咖啡。",
  "東京で新しい仕事を始めました。",
  "Melanie is taking pottery classes on weekends.",
  "The dance studio opened in the city center in June."
]

const queries = [
  "What did Melanie paint?",
  "Where did Melanie go camping?",
  "What did Caroline research?",
  "Why did Jon open a dance studio?",
  "support group",
  "咖啡",
  "lost job",
  "pottery weekend classes"
]

const bank = "keyword-parity"

layer(testApp(), { excludeTestServices: true })("keyword index", (it) => {
  it.effect("returns what the SQL strategy returns, in the same order, and stays current after retains and deletes", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
        json: { items: facts.map((content) => ({ content })) }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      const types = ["world", "experience"]
      const scope = sql.and([sql`u.bank_id = ${bank}`, sql`u.fact_type IN ${sql.in(types)}`])
      const corpus = yield* corpusStatistics(bank)
      for (const query of queries) {
        const fromSql = yield* keyword({ scope, bankId: bank, query, depth: 20, corpus })
        const fromIndex = yield* keywordInMemory({
          bankId: bank,
          query,
          expansion: [],
          types,
          depth: 20,
          sqlScope: scope
        })
        assert.isAbove(fromIndex.length, 0, query)
        assert.deepStrictEqual(fromIndex.map((c) => c.id), fromSql.map((c) => c.id), query)
        fromIndex.forEach((candidate, i) => assert.closeTo(candidate.score, fromSql[i]!.score, 1e-6, query))
      }

      // Retained after the index was built: found by the very next keyword search.
      yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
        json: { items: [{ content: "Caroline adopted a puppy named Oscar.", document_id: "pets" }] }
      })
      const recalled = yield* server.request("POST", `/v1/default/banks/${bank}/memories/recall`, {
        json: { query: "Oscar puppy", trace: true }
      })
      const keywordIds: Array<string> = recalled.body.trace.strategies.keyword.candidates.map((c: { id: string }) =>
        c.id
      )
      const puppy = recalled.body.results.find((r: { text: string }) => r.text.includes("Oscar"))
      assert.isDefined(puppy, recalled.text)
      assert.include(keywordIds, puppy.id)

      // Its document deleted: gone from the keyword candidates too.
      const deleted = yield* server.request("DELETE", `/v1/default/banks/${bank}/documents/pets`)
      assert.oneOf(deleted.status, [200, 204], deleted.text)
      const after = yield* server.request("POST", `/v1/default/banks/${bank}/memories/recall`, {
        json: { query: "Oscar puppy", trace: true }
      })
      assert.notInclude(after.body.trace.strategies.keyword.candidates.map((c: { id: string }) => c.id), puppy.id)
    }))

  it.effect("applies tags, tags_match and tag groups exactly as the SQL scope does", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const tagged = "keyword-parity-tags"
      const items = [
        { content: "Melanie painted the lake at sunrise.", tags: ["user:mel", "art"] },
        { content: "Melanie painted her kids at the lake.", tags: ["user:mel"] },
        { content: "Caroline painted a portrait by the lake.", tags: ["user:caro", "art"] },
        { content: "Caroline swam in the lake every morning.", tags: ["user:caro"] },
        { content: "Someone painted the boathouse by the lake.", tags: [] },
        { content: "The lake froze over in January.", tags: ["weather"] }
      ]
      const retained = yield* server.request("POST", `/v1/default/banks/${tagged}/memories`, { json: { items } })
      assert.strictEqual(retained.status, 200, retained.text)
      const types = ["world", "experience"]
      const corpus = yield* corpusStatistics(tagged)
      const scopes: ReadonlyArray<{
        readonly tags?: ReadonlyArray<string>
        readonly tagsMatch?: TagsMatch
        readonly tagGroups?: ReadonlyArray<TagGroup>
      }> = [
        { tags: ["user:mel"] },
        ...(["any", "all", "any_strict", "all_strict"] as const).map((tagsMatch) => ({
          tags: ["user:mel", "art"],
          tagsMatch
        })),
        { tagGroups: [{ or: [{ tags: ["user:mel"], match: "any_strict" }, { tags: ["art"], match: "all_strict" }] }] },
        { tagGroups: [{ tags: ["art"], match: "any" }, { not: { tags: ["user:caro"], match: "any_strict" } }] },
        { tagGroups: [{ and: [] }, { or: [{ tags: [], match: "all_strict" }] }] }
      ]
      const differentAnswers = new Set<string>()
      for (const scope of scopes) {
        const where = sql.and([
          sql`u.bank_id = ${tagged}`,
          sql`u.fact_type IN ${sql.in(types)}`,
          tagScope(sql, "u.tags", scope)
        ])
        const fromSql = yield* keyword({ scope: where, bankId: tagged, query: "painted lake", depth: 20, corpus })
        const fromIndex = yield* keywordInMemory({
          bankId: tagged,
          query: "painted lake",
          expansion: [],
          types,
          tags: tagMatcher(scope),
          depth: 20,
          sqlScope: where
        })
        const label = JSON.stringify(scope)
        assert.deepStrictEqual(fromIndex.map((c) => c.id), fromSql.map((c) => c.id), label)
        fromIndex.forEach((candidate, i) => assert.closeTo(candidate.score, fromSql[i]!.score, 1e-6, label))
        differentAnswers.add(fromIndex.map((c) => c.id).sort().join(","))
      }
      // The scopes really filter: they do not all return the same memories.
      assert.isAbove(differentAnswers.size, 4)
    }))
})

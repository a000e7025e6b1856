/**
 * The query lexemes engram computes without the database are exactly PostgreSQL's, on the real database tier
 * (PGlite is PostgreSQL 18, the CI server 15, whose stemmers differ): on ordinary questions, on words chosen for
 * their suffixes, and on random text mixing words, numbers, hyphens, apostrophes and punctuation. Where the function
 * declines (`undefined`), the database is asked; the test also holds it to answering ordinary questions itself.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { SqlClient } from "effect/sql"
import { DatabaseLive } from "../../../../layers/Database.ts"
import { EngramConfig } from "../../../../src/config/EngramConfig.ts"
import { englishLexemes, QueryLexemes } from "../../../../src/memory/recall/keyword/QueryLexemes.ts"
import { freshDatabaseSettings } from "../../../support/TestServer.ts"
import { loadLocomo, locomoAvailable } from "../../../support/Locomo.ts"

const database = DatabaseLive.pipe(Layer.provideMerge(EngramConfig.layerWith(freshDatabaseSettings())))

const questions = [
  "Where does Alice work now?",
  "What did Melanie paint last summer, and why?",
  "When did Caroline go to the LGBTQ support group?",
  "How many 5k races has Jon run in 2023?",
  "Which well-known state-of-the-art co-op did they join?",
  "What's Gina's favourite e-mail client (if any)?",
  "Did they say \"never again\" after the camping trip!",
  "List: apples, oranges; pears. And kiwis?",
  "Tell me about the 42nd street cafe, the 3rd floor, and mp3 players.",
  "Generously adding running connections: organization, generalization, happiness, hopefully.",
  "skies dying lying news innings outing canning herring proceed exceed succeed"
]

const words = [
  "run",
  "running",
  "runner",
  "added",
  "adding",
  "erred",
  "offing",
  "ebbing",
  "eddies",
  "connection",
  "connected",
  "relational",
  "rationally",
  "generously",
  "happiness",
  "hopefully",
  "organization",
  "argued",
  "arguing",
  "skies",
  "dying",
  "lying",
  "news",
  "innings",
  "outing",
  "canning",
  "herring",
  "proceed",
  "exceed",
  "succeed",
  "the",
  "a",
  "is",
  "don",
  "t",
  "s",
  "will",
  "Caroline",
  "Melanie",
  "LGBTQ",
  "painting",
  "paintings",
  "national",
  "university",
  "international",
  "gently",
  "fluently",
  "emotional",
  "cats",
  "caresses",
  "ponies",
  "agreed",
  "owned",
  "hoping",
  "hopping",
  "fizzed",
  "filing",
  "sensational",
  "traditional",
  "reference",
  "formality",
  "sensitivity",
  "abcdefghijklmnopqrstuvwxyz",
  "x",
  "ab",
  "aardvark",
  "yoyo",
  "syzygy"
]

const pieces = fc.oneof(
  fc.constantFrom(...words),
  fc.stringMatching(/^[a-z]{1,12}(ing|ed|ly|ness|ational|ies|s|ment|er)?$/),
  fc.stringMatching(/^[A-Z][a-z]{0,8}$/),
  fc.stringMatching(/^[0-9]{1,6}$/),
  fc.stringMatching(/^[0-9]{1,3}[a-z]{1,3}$/),
  fc.stringMatching(/^[a-z]{1,6}-[a-z]{1,6}(-[a-z]{1,4})?$/),
  fc.constantFrom(
    " ",
    " ",
    "  ",
    ", ",
    ". ",
    "? ",
    "!",
    "'",
    "'s ",
    "n't ",
    "\"",
    "(",
    ")",
    "; ",
    ": ",
    "-",
    ".",
    "...",
    "\n",
    "\t",
    "[",
    "]",
    "{",
    "}",
    "1.5",
    "v2.0",
    "a.b",
    "x@y.z",
    "http://e.org/p",
    "10:30",
    "-3",
    "+",
    "_",
    "é",
    "’",
    "<b>",
    "&amp;",
    "1e5",
    "C++",
    "/tmp/x"
  )
)
const text = fc.array(pieces, { minLength: 1, maxLength: 14 }).map((parts) => parts.join(""))

layer(database)("query lexemes", (it) => {
  const fromDatabase = (texts: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ lexemes: string }>`
        SELECT array_to_json(tsvector_to_array(to_tsvector('english', t)))::text AS lexemes
        FROM unnest(${texts}::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n`
      return rows.map((row) => JSON.parse(row.lexemes) as ReadonlyArray<string>)
    })

  it.effect("the start-up check passes on this server, and ordinary questions need no statement", () =>
    Effect.gen(function*() {
      const lexemes = yield* QueryLexemes
      assert.notStrictEqual(lexemes.mode, "database")
      const expected = yield* fromDatabase(questions)
      questions.forEach((question, i) => assert.deepStrictEqual(lexemes.english(question), expected[i], question))
    }).pipe(Effect.provide(QueryLexemes.layer)))

  it.effect("equals PostgreSQL's lexemes wherever it answers, on random text", () =>
    Effect.gen(function*() {
      const lexemes = yield* QueryLexemes
      const samples = fc.sample(text, Number(process.env["LEXEME_SAMPLES"] ?? 3000))
      const expected = yield* fromDatabase(samples)
      let answered = 0
      samples.forEach((sample, i) => {
        const computed = lexemes.english(sample)
        if (computed === undefined) return
        answered++
        assert.deepStrictEqual(computed, expected[i], JSON.stringify(sample))
      })
      // Most random samples are plain enough to be answered here.
      assert.isAbove(answered, samples.length / 3)
    }).pipe(Effect.provide(QueryLexemes.layer)))

  it.effect.skipIf(!locomoAvailable)(
    "every LoCoMo question is answered here, exactly as PostgreSQL would",
    () =>
      Effect.gen(function*() {
        const lexemes = yield* QueryLexemes
        const all = loadLocomo().flatMap((sample) => sample.qa.map((qa) => qa.question))
        const expected = yield* fromDatabase(all)
        let declined = 0
        all.forEach((question, i) => {
          const computed = lexemes.english(question)
          if (computed === undefined) return void declined++
          assert.deepStrictEqual(computed, expected[i], question)
        })
        assert.isAtMost(declined, all.length * 0.02, `${declined} of ${all.length} questions asked the database`)
      }).pipe(Effect.provide(QueryLexemes.layer))
  )

  it("declines what only the database can tell", () => {
    for (
      const sample of [
        "x@y.org",
        "v1.2.3",
        "http://a.b/c",
        "naïve café",
        "covid-19",
        "-5 degrees",
        "1e5",
        "<b>hi</b>",
        "a_b"
      ]
    ) {
      assert.isUndefined(englishLexemes(sample, "pg18"), sample)
    }
  })
})

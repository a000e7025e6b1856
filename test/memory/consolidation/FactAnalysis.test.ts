/**
 * The offline consolidator's reading of a fact and the observation text it writes: subject, third-person clause
 * without greetings, questions or remarks about the listener, dates from the extractor's notes, topic nouns; and
 * an observation that keeps the latest distinct clauses in the order they happened.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ConsolidationFact } from "../../../src/memory/consolidation/ConsolidationFact.ts"
import { analyzeFact } from "../../../src/memory/consolidation/FactAnalysis.ts"
import { renderGroup } from "../../../src/memory/consolidation/OfflineConsolidator.ts"
import { textPolicy } from "../../../src/memory/consolidation/ObservationText.ts"

const people = [{ id: "e-mel", name: "Melanie", type: "person" }, { id: "e-car", name: "Caroline", type: "person" }]

const fact = (text: string, overrides: Partial<ConsolidationFact> = {}): ConsolidationFact => ({
  id: `f-${text.length}-${text.slice(0, 12)}`,
  text,
  factType: "experience",
  tags: [],
  observationScopes: null,
  mentionedAt: new Date("2023-05-08T13:56:00Z"),
  occurredStart: null,
  seq: 1,
  entities: people,
  ...overrides
})

describe("fact analysis", () => {
  it("a conversation turn is about its speaker, in the third person, dated, without greetings or questions", () => {
    const analyzed = analyzeFact(fact(
      "Caroline: Hey Mel! Good to see you! I went to a LGBTQ support group yesterday and I love it. How are you? " +
        "[yesterday: 7 May 2023]"
    ))
    assert.strictEqual(analyzed.subjectId, "e-car")
    assert.strictEqual(analyzed.subjectName, "Caroline")
    assert.strictEqual(analyzed.clause, "went to a LGBTQ support group yesterday (7 May 2023) and Caroline loves it")
    // Every noun of "LGBTQ support group" may name the topic; the phrase head counts most.
    assert.deepStrictEqual(analyzed.topics, [
      { head: "lgbtq", phrase: "LGBTQ", weight: 0.4 },
      { head: "support", phrase: "support", weight: 0.4 },
      { head: "group", phrase: "support group", weight: 1 }
    ])
  })

  it("greetings, reactions and remarks about the listener say nothing durable", () => {
    for (
      const text of [
        "Caroline: Hey Mel! Good to see you! How have you been?",
        "Melanie: Wow, that's cool, Caroline! Did you hear any inspiring stories?",
        "Caroline: Your kind words mean a lot. You really put in the work!",
        "Melanie: That's a gorgeous photo, Caroline."
      ]
    ) {
      assert.isNull(analyzeFact(fact(text)).clause, text)
    }
  })

  it("prose is about the person it names first; a capitalised first word is not taken for a name", () => {
    const prose = analyzeFact(fact("Alice works at Google as a software engineer.", {
      factType: "world",
      entities: [{ id: "e-g", name: "Google", type: "organization" }, { id: "e-a", name: "Alice", type: "person" }]
    }))
    assert.strictEqual(prose.subjectId, "e-a")
    assert.strictEqual(prose.clause, "works at Google as a software engineer")
    assert.deepStrictEqual(prose.topics.map((topic) => topic.head), ["google", "software", "engineer"])
    const opener = analyzeFact(fact("Melanie: Painting's a fun way to express my feelings and get creative."))
    assert.strictEqual(opener.topics[0]!.head, "painting")
    assert.include(opener.clause!, "Melanie's feelings")
  })

  it("an observation keeps the latest distinct clauses in order and says how many came before", () => {
    const lines = Array.from(
      { length: textPolicy.maxClauses + 2 },
      (_, index) =>
        analyzeFact(
          fact(
            `Melanie: I painted a new ${
              ["lake", "barn", "forest", "harbour", "meadow", "bridge", "castle", "garden"][index]
            } landscape with oils.`,
            {
              id: `p${index}`,
              seq: index,
              mentionedAt: new Date(Date.UTC(2023, 0, index + 1))
            }
          )
        )
    )
    const repeat = analyzeFact(
      fact("Melanie: I painted a new garden landscape with oils!", {
        id: "again",
        seq: 99,
        mentionedAt: new Date(Date.UTC(2023, 5, 1))
      })
    )
    const text = renderGroup("landscape", [...lines, repeat].reverse())
    assert.match(text, /^Melanie — (garden )?landscape: painted a new forest landscape/)
    assert.notInclude(text, "lake", "the oldest clauses give way")
    assert.notInclude(text, "barn")
    assert.include(text, "(and 2 earlier)")
    const clauses = text.slice(text.indexOf(": ") + 2)
    assert.strictEqual(clauses.split("garden").length - 1, 1, "a repeated statement appears once")
    assert.isBelow(clauses.indexOf("forest"), clauses.indexOf("castle"), "in the order they happened")
    assert.isBelow(clauses.indexOf("castle"), clauses.indexOf("garden"), "the repeat counts as the latest")
  })
})

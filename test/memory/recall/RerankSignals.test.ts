/**
 * The deterministic reranker's signals beyond the fused score: how much of the query a candidate contains (by stem,
 * rare words counting most) and its episode contains between its turns, the support of its episode (the best
 * candidate said close to it in time), whether it is about whom the query names, and whether it asks a question.
 */
import { assert, describe, it } from "@effect/vitest"
import { asksQuestion, asksWhen, dated, namesSubject } from "../../../src/memory/recall/AnswerShape.ts"
import { episodeAgreement, episodes, episodeSupport } from "../../../src/memory/recall/EpisodeSupport.ts"
import { deterministicRerank, type Fused } from "../../../src/memory/recall/Fusion.ts"
import { queryCoverages } from "../../../src/memory/recall/QueryCoverage.ts"

const fused = (id: string, combined: number): Fused => ({
  id,
  rrf: combined / 100,
  combined,
  ranks: { keyword: 1 },
  scores: { keyword: combined }
})
const hour = 3_600_000

/** Each text's own coverage, every text its own episode. */
const ownCoverage = (query: string, texts: ReadonlyArray<string>) =>
  queryCoverages(query, texts, texts.map((_, index) => index)).own

describe("query coverage", () => {
  it("counts a word every candidate holds less than a rare one, matches by stem and ignores stop words", () => {
    const texts = [
      "Melanie: Yeah, Caroline! I'll start thinking about what we can do.",
      "Melanie: I've been painting landscapes to relax lately.",
      "Melanie: Thanks, Caroline!",
      "Caroline: What does the painting show?"
    ]
    const [nameOnly, painting, thanks, question] = ownCoverage("What does Melanie paint?", texts)
    // "paint" matches "painting" (same stem) and is rarer among the candidates than the speaker's name.
    assert.isAbove(painting!, nameOnly!)
    assert.isAbove(question!, nameOnly!)
    assert.strictEqual(nameOnly, thanks)
    assert.isAbove(nameOnly!, 0)
    assert.strictEqual(painting, 1)
    // "what" and "does" are stop words: a text holding only them covers nothing.
    assert.deepStrictEqual(ownCoverage("What does Melanie paint?", ["what does it do"]), [0])
    assert.deepStrictEqual(ownCoverage("what is it", ["anything"]), [0])
  })
})

describe("queryCoverages", () => {
  it("credits an episode with the query words its turns hold between them", () => {
    const texts = [
      "Melanie: We went camping at the beach.",
      "Melanie: The kids loved the forest too.",
      "Melanie: Camping in the forest was fun."
    ]
    const { episode, own } = queryCoverages("Melanie camping beach forest", texts, [0, 0, 1])
    // The first two turns hold every word between them; the third, alone in its episode, misses "beach".
    assert.strictEqual(episode[0], 1)
    assert.strictEqual(episode[1], 1)
    assert.isBelow(episode[2]!, 1)
    assert.strictEqual(episode[2], own[2])
    assert.isBelow(own[0]!, 1)
  })
})

describe("episodes", () => {
  it("numbers candidates said within an hour of each other alike, and an untimed one alone", () => {
    const found = episodes([{ said: 5 * hour }, { said: 0 }, { said: 30 * 60_000 }, { said: undefined }])
    assert.strictEqual(found[1], found[2])
    assert.notStrictEqual(found[0], found[1])
    assert.notStrictEqual(found[3], found[0])
    assert.notStrictEqual(found[3], found[1])
  })
})

describe("answer shape", () => {
  it("finds a subject named in the query as whole words, ignoring case", () => {
    assert.isTrue(namesSubject("What instruments does Melanie play?", "Melanie"))
    assert.isTrue(namesSubject("what are melanie's pets' names?", "Melanie"))
    assert.isTrue(namesSubject("Where did Dr. Ross (the vet) work?", "Dr. Ross"))
    assert.isFalse(namesSubject("What does Mel play?", "Melanie"))
    assert.isFalse(namesSubject("What does Melanie play?", "Mel"))
    assert.isFalse(namesSubject("What does Melanie play?", undefined))
    assert.isFalse(namesSubject("What does Melanie play?", " "))
  })

  it("tells a question asking when, and a memory with a time of its own", () => {
    assert.isTrue(asksWhen("When did Caroline go to the LGBTQ conference?"))
    assert.isTrue(asksWhen("What year did Melanie start painting?"))
    assert.isTrue(asksWhen("how long ago was the trip?"))
    assert.isFalse(asksWhen("Where did Caroline go?"))
    assert.isFalse(asksWhen("Whenever I call, who answers?"))
    const said = new Date(Date.UTC(2023, 4, 8))
    assert.isTrue(dated(new Date(Date.UTC(2023, 4, 6)), said))
    assert.isTrue(dated(new Date(Date.UTC(2023, 4, 6)), null))
    assert.isFalse(dated(new Date(said.getTime()), said))
    assert.isFalse(dated(null, said))
  })

  it("tells a memory that asks a question", () => {
    assert.isTrue(asksQuestion("Caroline: You play any instruments?"))
    assert.isFalse(asksQuestion("Melanie: Yeah, I play clarinet!"))
  })
})

describe("episodeSupport", () => {
  it("gives each candidate the best score of its episode, which a silence of more than an hour ends", () => {
    const items = [
      { said: 0, score: 1 },
      { said: 10 * 60_000, score: 0.4 },
      // Under an hour after the previous one: the same episode, though more than an hour after the first.
      { said: 70 * 60_000, score: 0.2 },
      { said: 70 * 60_000 + hour + 1, score: 0.9 },
      { said: undefined, score: 0.8 }
    ]
    const support = episodeSupport(items.map((item) => item.score), episodes(items))
    assert.deepStrictEqual(support, [1, 1, 1, 0.9, 0.8])
  })
})

describe("episodeAgreement", () => {
  it("gives each candidate the mean of its episode's best scores, counting missing ones as 0", () => {
    const agreement = episodeAgreement([0.9, 0.3, 0.6, 0.5, 0.8], [0, 0, 0, 0, 1], 3)
    // Episode 0's best three: 0.9, 0.6, 0.5; episode 1 holds one.
    assert.deepStrictEqual(agreement.map((value) => Number(value.toFixed(6))), [
      0.666667,
      0.666667,
      0.666667,
      0.666667,
      0.266667
    ])
  })
})

describe("deterministicRerank", () => {
  it("ranks the conversation where several turns answer above one lone turn that matches a little better", () => {
    const day = 24 * hour
    const turn = (id: string, score: number, text: string, said: number) => ({
      fused: fused(id, score),
      text,
      time: null,
      factType: "experience",
      said: new Date(said),
      subject: "Gina"
    })
    const items = [
      // The same words as "trip", a higher fused score and so a higher episode support: it leads on every
      // first-pass signal, and only the second pass (its episode agrees less) puts it below.
      turn("lone", 1, "Gina: We traveled to Rome.", 0),
      turn("trip", 0.95, "Gina: We traveled to Rome.", 5 * day),
      turn("trip-food", 0.9, "Gina: The food in Rome was lovely.", 5 * day + 60_000),
      turn("trip-train", 0.9, "Gina: The train to Rome was long.", 5 * day + 120_000)
    ]
    const ranked = deterministicRerank("Where did Gina travel?", items, { window: null, preferObservations: false })
    assert.strictEqual(ranked[0]!.fused.id, "trip")
    assert.isAbove(ranked.findIndex((item) => item.fused.id === "lone"), 0)
    for (const item of ranked) assert.isTrue(item.score >= 0 && item.score <= 1)
  })

  it("ranks a turn of the conversation that talks about the question above an equal match said on another day", () => {
    const day = 24 * hour
    const items = [
      // Same score and text as "b-beside": without episodes the id would put it first.
      {
        fused: fused("a-elsewhere", 0.5),
        text: "Gina: I went to the museum.",
        time: null,
        factType: "experience",
        said: new Date(0)
      },
      {
        fused: fused("best", 1),
        text: "Gina: The dinosaur exhibit was great.",
        time: null,
        factType: "experience",
        said: new Date(3 * day)
      },
      {
        fused: fused("b-beside", 0.5),
        text: "Gina: I went to the museum.",
        time: null,
        factType: "experience",
        said: new Date(3 * day + 60_000)
      }
    ]
    const ranked = deterministicRerank("Which exhibit at the museum did Gina like?", items, {
      window: null,
      preferObservations: false
    })
    assert.deepStrictEqual(ranked.map((item) => item.fused.id), ["best", "b-beside", "a-elsewhere"])
    for (const item of ranked) assert.isTrue(item.score >= 0 && item.score <= 1)
  })

  it("leaves the order alone when every candidate was said in one episode (a bank retained at once)", () => {
    const items = [0.4, 1, 0.7].map((score, index) => ({
      fused: fused(`m${index}`, score),
      text: "the same words",
      time: null,
      factType: "world",
      said: new Date(index * 60_000)
    }))
    const ranked = deterministicRerank("words", items, { window: null, preferObservations: false })
    assert.deepStrictEqual(ranked.map((item) => item.fused.id), ["m1", "m2", "m0"])
  })
  it("puts the answer by whom the query names above a question that asks for it", () => {
    const items = [
      // The question shares more of the query's words and scores higher on every other signal.
      {
        fused: fused("question", 1),
        text: "Caroline: You play any instruments?",
        time: null,
        factType: "experience",
        said: new Date(0),
        subject: "Caroline"
      },
      {
        fused: fused("answer", 0.8),
        text: "Melanie: Yeah, I play clarinet!",
        time: null,
        factType: "experience",
        said: new Date(60_000),
        subject: "Melanie"
      }
    ]
    const ranked = deterministicRerank("What instruments does Melanie play?", items, {
      window: null,
      preferObservations: false
    })
    assert.deepStrictEqual(ranked.map((item) => item.fused.id), ["answer", "question"])
    for (const item of ranked) assert.isTrue(item.score >= 0 && item.score <= 1)
    // Without those two signals the question stays first: they decide it.
    const anonymous = deterministicRerank(
      "What instruments does Melanie play?",
      items.map((item) => ({ ...item, subject: undefined, text: item.text.replace("?", ".") })),
      { window: null, preferObservations: false }
    )
    assert.deepStrictEqual(anonymous.map((item) => item.fused.id), ["question", "answer"])
  })
  it("for a question asking when, puts the turn that says when above one that only talks about it", () => {
    const said = new Date(Date.UTC(2023, 6, 15))
    const items = [
      {
        fused: fused("talks", 1),
        text: "Caroline: The LGBTQ conference was so inspiring.",
        time: said,
        factType: "experience",
        said,
        subject: "Caroline"
      },
      {
        fused: fused("says-when", 0.85),
        text: "Caroline: I went to an LGBTQ conference two days ago.",
        time: new Date(Date.UTC(2023, 6, 13)),
        factType: "experience",
        said,
        subject: "Caroline"
      }
    ]
    const options = { window: null, preferObservations: false }
    const ranked = deterministicRerank("When did Caroline go to the LGBTQ conference?", items, options)
    assert.deepStrictEqual(ranked.map((item) => item.fused.id), ["says-when", "talks"])
    for (const item of ranked) assert.isTrue(item.score >= 0 && item.score <= 1)
    // A question that does not ask when leaves the better match first.
    const where = deterministicRerank("Where did Caroline go to the LGBTQ conference?", items, options)
    assert.deepStrictEqual(where.map((item) => item.fused.id), ["talks", "says-when"])
  })
})

/**
 * Questions about a state answered with the state valid at the time asked, over HTTP with the offline pipeline: 22
 * hand-written change histories (employers, cities, tools, cars, partners; two or three states months apart; with
 * and without a negation between them). "Where does X work?" ranks the latest state first; a question naming a past
 * time ranks the state valid then first.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath } from "../../support/HttpCalls.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

interface History {
  /** Each state (or end) with the day it was said, oldest first. */
  readonly said: ReadonlyArray<readonly [string, string]>
  /** A question about now, and the words of the answer that must come first. */
  readonly now: readonly [string, string]
  /** A question about a past time, and the words of the state valid then. */
  readonly then?: readonly [string, string]
}

const histories: ReadonlyArray<History> = [
  {
    said: [["2023-01-10", "Alice works at Acme Corp as a data engineer."], [
      "2023-02-19",
      "Alice no longer works at Acme Corp; she resigned."
    ], ["2023-02-20", "Alice joined Globex as a staff engineer."]],
    now: ["Where does Alice work?", "Globex"],
    then: ["Where did Alice work in January 2023?", "Acme"]
  },
  {
    said: [["2022-03-01", "Bob works at Initech as an accountant."], [
      "2022-09-15",
      "Bob joined Hooli as a controller."
    ], ["2023-05-02", "Bob joined Pied Piper as the finance lead."]],
    now: ["Where does Bob work now?", "Pied Piper"],
    then: ["Where did Bob work in October 2022?", "Hooli"]
  },
  {
    said: [["2021-06-01", "Carla works for Umbrella Labs as a chemist."], [
      "2022-06-01",
      "Carla works for Aperture Science as a researcher."
    ]],
    now: ["Who does Carla work for?", "Aperture"],
    then: ["Who did Carla work for in December 2021?", "Umbrella"]
  },
  {
    said: [["2020-02-01", "Dmitri lives in Lisbon with two cats."], [
      "2021-04-01",
      "Dmitri moved to Berlin for a new job."
    ], ["2022-08-01", "Dmitri moved to Oslo last week."]],
    now: ["Where does Dmitri live?", "Oslo"],
    then: ["Where did Dmitri live in May 2021?", "Berlin"]
  },
  {
    said: [["2022-01-05", "Eva lives in Paris near the river."], [
      "2023-03-05",
      "Eva moved to Madrid to be closer to family."
    ]],
    now: ["Which city does Eva live in?", "Madrid"],
    then: ["Where did Eva live in June 2022?", "Paris"]
  },
  {
    said: [["2021-01-01", "Farid lives in Cairo and teaches math."], [
      "2022-07-01",
      "Farid relocated to Dubai for work."
    ]],
    now: ["Where does Farid live these days?", "Dubai"],
    then: ["Where did Farid live in March 2021?", "Cairo"]
  },
  {
    said: [["2022-02-01", "Gina uses Vim for all her coding."], [
      "2023-02-01",
      "Gina switched to Emacs after a long debate."
    ]],
    now: ["Which editor does Gina use?", "Emacs"],
    then: ["Which editor did Gina use in May 2022?", "Vim"]
  },
  {
    said: [["2021-05-01", "Hugo uses Photoshop for his photos."], [
      "2022-05-01",
      "Hugo switched to Lightroom for his photos."
    ], ["2023-05-01", "Hugo switched to Darktable for his photos."]],
    now: ["What software does Hugo use for photos?", "Darktable"],
    then: ["What software did Hugo use for photos in August 2022?", "Lightroom"]
  },
  {
    said: [["2022-09-01", "Ivy uses Notion to plan her week."], [
      "2023-09-01",
      "Ivy migrated to Obsidian to plan her week."
    ]],
    now: ["What does Ivy use to plan her week?", "Obsidian"],
    then: ["What did Ivy use to plan her week in December 2022?", "Notion"]
  },
  {
    said: [["2020-03-01", "Jon drives a Honda Civic to work."], ["2022-03-01", "Jon drives a Tesla Model 3 now."]],
    now: ["What car does Jon drive?", "Tesla"],
    then: ["What car did Jon drive in May 2021?", "Honda"]
  },
  {
    said: [["2021-03-01", "Kate drives a Ford Ranger on the farm."], [
      "2023-01-01",
      "Kate drives a Toyota Prius in the city."
    ]],
    now: ["Which car does Kate drive?", "Toyota"],
    then: ["Which car did Kate drive in June 2022?", "Ford"]
  },
  {
    said: [["2021-01-10", "Leo is dating Mia from the climbing gym."], ["2022-01-10", "Leo broke up with Mia."], [
      "2022-06-10",
      "Leo is dating Nora from his book club."
    ]],
    now: ["Who is Leo dating?", "Nora"],
    then: ["Who was Leo dating in June 2021?", "Mia"]
  },
  {
    said: [["2019-05-01", "Olga married Peter in a small ceremony."], ["2021-05-01", "Olga divorced Peter."], [
      "2022-05-01",
      "Olga is engaged to Sam Reyes."
    ]],
    now: ["Who is Olga's partner?", "Sam"]
  },
  {
    said: [["2022-04-01", "Quinn works at Sunny Bakery on weekends."], [
      "2023-04-01",
      "Quinn joined Golden Cafe as a barista."
    ]],
    now: ["Where does Quinn work?", "Golden Cafe"],
    then: ["Where did Quinn work in July 2022?", "Sunny Bakery"]
  },
  {
    said: [["2021-08-01", "Rosa lives in Toronto with her sister."], [
      "2023-08-01",
      "Rosa moved to Vancouver for the mountains."
    ]],
    now: ["Where does Rosa live?", "Vancouver"],
    then: ["Where did Rosa live in January 2022?", "Toronto"]
  },
  {
    said: [["2020-10-01", "Tara lives in Austin near the lake."], ["2021-10-01", "Tara moved to Denver for school."], [
      "2023-10-01",
      "Tara moved back to Austin for good."
    ]],
    now: ["Where does Tara live?", "back to Austin"],
    then: ["Where did Tara live in March 2022?", "Denver"]
  },
  {
    said: [["2022-01-15", "Uma uses Slack to talk to her team."], [
      "2023-01-15",
      "Uma switched to Discord to talk to her team."
    ]],
    now: ["What does Uma use to talk to her team?", "Discord"],
    then: ["What did Uma use to talk to her team in April 2022?", "Slack"]
  },
  {
    said: [["2021-02-01", "Victor drives a Volvo wagon."], ["2022-11-01", "Victor drives a BMW coupe."]],
    now: ["What does Victor drive?", "BMW"],
    then: ["What did Victor drive in March 2022?", "Volvo"]
  },
  {
    said: [["2020-06-01", "Wendy works at Microsoft on the Azure team."], [
      "2021-06-01",
      "Wendy quit Microsoft to travel."
    ], ["2022-06-01", "Wendy works at Google on the search team."]],
    now: ["Where does Wendy work?", "Google"],
    then: ["Where did Wendy work in December 2020?", "Microsoft"]
  },
  {
    said: [["2019-09-01", "Yusuf lives in Seattle by the sound."], [
      "2021-09-01",
      "Yusuf moved to Portland for the food."
    ], ["2023-09-01", "Yusuf moved to Chicago for a job."]],
    now: ["Where does Yusuf live?", "Chicago"],
    then: ["Where did Yusuf live in May 2022?", "Portland"]
  },
  {
    said: [["2022-05-20", "Zoe uses Figma for every design."], [
      "2023-05-20",
      "Zoe switched to Penpot for every design."
    ]],
    now: ["Which design tool does Zoe use?", "Penpot"],
    then: ["Which design tool did Zoe use in November 2022?", "Figma"]
  },
  {
    said: [["2021-03-03", "Nadia works at Stark Industries as a welder."], [
      "2022-03-03",
      "Nadia no longer works at Stark Industries."
    ], ["2022-04-03", "Nadia works at Wayne Enterprises as a welder."]],
    now: ["Where does Nadia work?", "Wayne"],
    then: ["Where did Nadia work in October 2021?", "Stark"]
  }
]

const first = (results: ReadonlyArray<{ readonly text: string }>) => results[0]?.text ?? ""

layer(testApp({ enableObservations: false }), { excludeTestServices: true })("state questions", (it) => {
  it.effect(
    "the current state first for a question about now, the state valid then for a past time",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const failures: Array<string> = []
        for (const [n, history] of histories.entries()) {
          const base = bankPath(`states-${n}`)
          for (const [day, content] of history.said) {
            const retained = yield* server.request("POST", `${base}/memories`, {
              json: { items: [{ content, timestamp: `${day}T12:00:00Z` }] }
            })
            assert.strictEqual(retained.status, 200, retained.text)
          }
          const asked = [history.now, ...(history.then === undefined ? [] : [history.then])]
          for (const [question, answer] of asked) {
            const recalled = yield* server.request("POST", `${base}/memories/recall`, { json: { query: question } })
            assert.strictEqual(recalled.status, 200, recalled.text)
            if (!first(recalled.body.results).includes(answer)) {
              failures.push(`${question} → "${first(recalled.body.results)}" (expected ${answer})`)
            }
          }
        }
        assert.deepStrictEqual(failures, [])
      }),
    { timeout: 180_000 }
  )
})

/**
 * Deterministic synthetic chat turns ("Speaker: text", the shape agents retain) and recall questions about them,
 * drawn from one vocabulary so that questions hit what was said. Seeded benches and HTTP load use the same turns;
 * nothing here touches a database.
 */

/** A small seeded generator (LCG), so every run builds the same banks and asks the same questions. */
export const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

export const people = [
  "Caroline",
  "Melanie",
  "Jon",
  "Gina",
  "Tim",
  "Andrew",
  "Audrey",
  "Nate",
  "Joanna",
  "Evan",
  "Maria",
  "Priya",
  "Omar",
  "Lena",
  "Sam",
  "Chloe",
  "Diego",
  "Hana",
  "Kofi",
  "Ines",
  "Ravi",
  "Zoe",
  "Marco",
  "Aisha",
  "Felix",
  "Nora",
  "Luca",
  "Yuki",
  "Clara",
  "Theo",
  "Oscar",
  "Sofia",
  "Emma",
  "Noah",
  "Grace",
  "Malik",
  "Elena",
  "Jonas",
  "Leila",
  "Hugo"
]

const places = [
  "Paris",
  "Boston",
  "Seattle",
  "Lisbon",
  "Denver",
  "Chicago",
  "Austin",
  "Toronto",
  "Berlin",
  "Kyoto",
  "the lake",
  "the beach",
  "the gym",
  "the museum",
  "the library",
  "grandma's house",
  "the farmers market",
  "the park",
  "the office",
  "the community center",
  "the mountains",
  "the old harbour",
  "the climbing hall",
  "the school",
  "the hospital",
  "the bakery downtown",
  "the campsite",
  "the train station",
  "the concert hall",
  "the zoo"
]

/** What people did: the phrase as said (past tense), and the topic a question about it names. */
const activities: ReadonlyArray<readonly [string, string]> = [
  ["went to a pottery class", "pottery"],
  ["ran a half marathon", "half marathon"],
  ["adopted a rescue dog", "rescue dog"],
  ["started guitar lessons", "guitar lessons"],
  ["finished a novel about sailing", "sailing novel"],
  ["cooked a vegetarian lasagna", "lasagna"],
  ["visited the science exhibition", "science exhibition"],
  ["planted tomatoes in the garden", "tomatoes"],
  ["fixed an old bicycle", "bicycle"],
  ["had a job interview at a startup", "job interview"],
  ["booked flights for a road trip", "road trip"],
  ["went camping by the river", "camping"],
  ["joined a support group", "support group"],
  ["painted a sunset over the water", "painting"],
  ["volunteered at the animal shelter", "animal shelter"],
  ["got a promotion at work", "promotion"],
  ["moved into a new apartment", "new apartment"],
  ["hosted a birthday party", "birthday party"],
  ["tried a new sushi restaurant", "sushi restaurant"],
  ["signed up for a yoga course", "yoga course"],
  ["saw a jazz concert", "jazz concert"],
  ["baked sourdough bread", "sourdough bread"],
  ["went hiking on a mountain trail", "hiking"],
  ["learned to swim properly", "swimming"],
  ["repainted the kitchen", "kitchen"],
  ["started a book club", "book club"],
  ["took the kids to the aquarium", "aquarium"],
  ["passed the driving test", "driving test"],
  ["went skiing for the first time", "skiing"],
  ["built a treehouse", "treehouse"],
  ["organized a charity run", "charity run"],
  ["sold the old car", "old car"],
  ["visited a vineyard", "vineyard"],
  ["started a vegetable patch", "vegetable patch"],
  ["watched the football final", "football final"],
  ["took a photography workshop", "photography workshop"],
  ["gave a talk at a conference", "conference talk"],
  ["went to a wedding", "wedding"],
  ["had surgery on a knee", "knee surgery"],
  ["bought a sailing boat", "sailing boat"]
]

const times = [
  "yesterday",
  "last week",
  "this morning",
  "two days ago",
  "last May",
  "on Sunday",
  "last weekend",
  "last night",
  "a few days ago",
  "in 2019",
  "last month",
  "on Friday",
  "",
  "",
  ""
]

const details = [
  "It took about {n} hours.",
  "We were {n} people.",
  "It cost {n} dollars.",
  "We walked {n} km.",
  "I had waited {n} weeks for it.",
  "There were {n} other families there.",
  "",
  ""
]

const feelings = [
  "It was amazing.",
  "I felt so proud.",
  "It was harder than I expected.",
  "We laughed a lot.",
  "I can't wait to do it again.",
  "My kids loved it.",
  "Honestly I was exhausted after.",
  "It made my week.",
  ""
]

export interface Turn {
  readonly content: string
  readonly speaker: string
  /** Index of the activity talked about: turns on the same topic are each other's likely vector neighbours. */
  readonly topic: number
}

const cities = new Set(places.filter((place) => !place.startsWith("the ") && !place.includes("'")))
const at = (place: string) => `${cities.has(place) ? "in" : "at"} ${place}`

/** The n-th turn of the stream with this seed: a statement about something a person did, or a question back. */
export const turnAt = (seed: number, n: number): Turn => {
  const next = random(seed * 1_000_003 + n * 7919)
  next()
  const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(next() * list.length)]!
  const speaker = pick(people)
  let other = pick(people)
  if (other === speaker) other = people[(people.indexOf(other) + 1) % people.length]!
  const topicIndex = Math.floor(next() * activities.length)
  const [did, topic] = activities[topicIndex]!
  const place = pick(places)
  const time = pick(times)
  const detail = pick(details).replace("{n}", String(2 + Math.floor(next() * 40)))
  const feeling = pick(feelings)
  const shape = next()
  const text = shape < 0.45
    ? `I ${did} ${at(place)} ${time} with ${other}. ${detail} ${feeling}`
    : shape < 0.65
    ? `${other} and I ${did} ${time}. ${feeling} ${detail}`
    : shape < 0.8
    ? `Guess what, ${other} ${did} ${at(place)} ${time}! ${detail}`
    : shape < 0.92
    ? `My friend ${other} ${did} ${time}, so we talked about the ${topic} for ages. ${feeling}`
    : `How was the ${topic} with ${other} ${at(place)}? I heard it was ${1 + Math.floor(next() * 9)} hours long.`
  return { content: `${speaker}: ${text}`.replace(/\s+/g, " ").trim(), speaker, topic: topicIndex }
}

/** Questions an agent asks before answering, about people, topics and places that the turns mention. */
export const recallQuestions = (seed: number, count: number): Array<string> => {
  const next = random(seed)
  const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(next() * list.length)]!
  return Array.from({ length: count }, () => {
    const person = pick(people)
    const [did, topic] = pick(activities)
    const place = pick(places)
    switch (Math.floor(next() * 7)) {
      case 0:
        return `What did ${person} do last weekend?`
      case 1:
        return `Who ${did} with ${person}?`
      case 2:
        return `When did ${person} go to the ${topic}?`
      case 3:
        return `What has ${person} been doing ${at(place)}?`
      case 4:
        return `How did ${person} feel about the ${topic}?`
      case 5:
        return `${person} ${topic}`
      default:
        return `Tell me about the ${topic} ${at(place)}`
    }
  })
}

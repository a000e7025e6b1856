/**
 * A state vocabulary and one state per fact, however it was produced (language model or offline clustering),
 * and the normalisation that makes any model answer usable: SCREAMING_SNAKE names, one label per fact, every
 * label in the vocabulary. Pure.
 */

export interface StateLabelling {
  readonly vocabulary: ReadonlyArray<string>
  readonly labels: ReadonlyArray<string>
}

export const maxStates = 16

export const stateName = (raw: string) =>
  raw.trim().toUpperCase().replace(/[^\p{L}\p{N}]+/gu, "_").replace(/^_+|_+$/g, "").slice(0, 64)

/**
 * Labels are cut or padded (with the last label) to the number of facts; a label outside the vocabulary is
 * added to it unless the vocabulary is full, in which case the fact takes the first state. A vocabulary of one
 * state is kept: a model that sees a single state is not made to invent a second.
 */
export const normalizeLabelling = (raw: StateLabelling, factCount: number): StateLabelling => {
  const vocabulary: Array<string> = []
  for (const name of raw.vocabulary.map(stateName)) {
    if (name !== "" && !vocabulary.includes(name) && vocabulary.length < maxStates) vocabulary.push(name)
  }
  const labels = raw.labels.map(stateName).filter((name) => name !== "").slice(0, factCount)
  while (labels.length < factCount) labels.push(labels.at(-1) ?? vocabulary[0] ?? "UNKNOWN")
  const resolved = labels.map((label) => {
    if (vocabulary.includes(label)) return label
    if (vocabulary.length < maxStates) {
      vocabulary.push(label)
      return label
    }
    return vocabulary[0]!
  })
  return { vocabulary, labels: resolved }
}

/**
 * A bank's disposition (skepticism, literalism, empathy, each 1–5) turned into concrete instructions for the
 * reflect prompt. Each level says what to do differently — how much evidence a claim needs, how far to infer,
 * how to address people — rather than naming an adjective the model may ignore.
 */
import type { DispositionTraits } from "../domain/Bank.ts"

const skepticism: Record<number, string> = {
  1: "Skepticism 1/5 (trusting): take what the memories say at face value; a single mention is enough to state " +
    "something as true. Do not hedge.",
  2: "Skepticism 2/5: accept what the memories say unless they contradict each other; hedge only on clear conflicts.",
  3: "Skepticism 3/5: state well-supported points plainly and mark claims that rest on a single memory as such.",
  4: "Skepticism 4/5: treat claims backed by one memory as unconfirmed and say so; point out contradictions and " +
    "say which memory is more recent.",
  5: "Skepticism 5/5 (skeptical): state nothing as fact unless at least two memories agree; label everything else " +
    "as unverified, list contradictions explicitly and say plainly what is not known."
}

const literalism: Record<number, string> = {
  1: "Literalism 1/5 (flexible): read the question for its intent; draw reasonable inferences and connect related " +
    "memories even when they do not mention the question's exact terms.",
  2: "Literalism 2/5: answer the intent of the question and allow small, clearly grounded inferences.",
  3: "Literalism 3/5: answer what was asked; infer only what follows directly from the memories.",
  4: "Literalism 4/5: answer exactly the question asked, in the memories' own terms; avoid inferences and say when " +
    "the memories do not state something directly.",
  5: "Literalism 5/5 (literal): answer only exactly what was asked, using only what the memories state word for " +
    "word; make no inferences, no generalisations and no guesses about intent."
}

const empathy: Record<number, string> = {
  1: "Empathy 1/5 (detached): be matter-of-fact; report facts and outcomes without emotional framing or comfort.",
  2: "Empathy 2/5: be neutral and concise; mention feelings only when they are the subject of the question.",
  3: "Empathy 3/5: be considerate; acknowledge feelings the memories record when they matter to the answer.",
  4: "Empathy 4/5: be warm; acknowledge the feelings and circumstances of the people involved and word difficult " +
    "facts with care.",
  5: "Empathy 5/5 (empathetic): lead with understanding for the people involved, acknowledge their feelings and " +
    "circumstances explicitly, and frame the answer supportively."
}

const clamp = (value: number) => Math.min(5, Math.max(1, Math.round(value)))

/** One instruction line per trait, in a fixed order. */
export const dispositionInstructions = (traits: DispositionTraits): ReadonlyArray<string> => [
  skepticism[clamp(traits.skepticism)]!,
  literalism[clamp(traits.literalism)]!,
  empathy[clamp(traits.empathy)]!
]

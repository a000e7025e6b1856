/**
 * The trajectory model's math against numbers worked out by hand: Laplace-smoothed transitions, a Viterbi path
 * that differs from the per-step best guess, the forward probability, forecasts that stay distributions, emissions
 * as a softmax of scaled cosines, and the offline clustering's determinism and names.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  anomalyScore,
  concentration,
  forecast,
  forwardLogProb,
  laplaceTransitions,
  logEmissions,
  matrixPower,
  viterbi
} from "../../../src/entities/trajectory/Hmm.ts"
import { clusterCount, kMeans, offlineLabelling } from "../../../src/entities/trajectory/OfflineLabels.ts"
import { normalizeLabelling } from "../../../src/entities/trajectory/StateLabelling.ts"

const close = (actual: number, expected: number, message?: string) =>
  assert.approximately(actual, expected, 1e-9, message)

// A two-state model: state 0 mostly emits what the first and last observations look like, state 1 the middle one.
const transitions = [[0.7, 0.3], [0.4, 0.6]]
const emissions = [[0.9, 0.1], [0.2, 0.8], [0.9, 0.1]]
const logB = emissions.map((row) => row.map(Math.log))

describe("trajectory HMM", () => {
  it("Laplace smoothing: (count + α) / (row total + α·K), and a state never left still has a distribution", () => {
    // 0→0 once, 0→1 once, 1→0 once.
    const a = laplaceTransitions([0, 0, 1, 0], 2, 0.1)
    close(a[0]![0]!, 1.1 / 2.2)
    close(a[0]![1]!, 1.1 / 2.2)
    close(a[1]![0]!, 1.1 / 1.2)
    close(a[1]![1]!, 0.1 / 1.2)
    const unseen = laplaceTransitions([0, 0], 3, 0.5)
    assert.deepStrictEqual(unseen[2], [1 / 3, 1 / 3, 1 / 3], "a state with no outgoing pairs is uniform")
  })

  it("Viterbi finds the most likely path, not the per-step best state", () => {
    // By hand: δ0 = [.45, .05]; δ1 = [.315·.2, .135·.8] = [.063, .108] (both from 0);
    // δ2 = [max(.063·.7, .108·.4)·.9, max(.063·.3, .108·.6)·.1] = [.03969 (from 0), .00648 (from 1)].
    // The path 0,0,0 (.03969) beats the step-wise guess 0,1,0 (.45·.3·.8·.4·.9 = .03888).
    assert.deepStrictEqual(viterbi(logB, transitions), [0, 0, 0])
    // A stronger middle observation flips the middle step.
    assert.deepStrictEqual(
      viterbi([[0.9, 0.1], [0.05, 0.95], [0.9, 0.1]].map((row) => row.map(Math.log)), transitions),
      [0, 1, 0]
    )
  })

  it("the forward algorithm sums over every path", () => {
    // α1 = [(.45·.7 + .05·.4)·.2, (.45·.3 + .05·.6)·.8] = [.067, .132];
    // α2 = [(.067·.7 + .132·.4)·.9, (.067·.3 + .132·.6)·.1] = [.08973, .00993].
    close(forwardLogProb(logB, transitions), Math.log(0.08973 + 0.00993))
    const score = anomalyScore(Math.log(0.09966), 3, 2)
    close(score, 1 - Math.exp(-(-Math.log(0.09966) / 6)))
    assert.isTrue(score > 0 && score < 1)
    assert.strictEqual(anomalyScore(0, 3, 2), 0, "a certain sequence is not anomalous")
  })

  it("forecast rows are distributions at every horizon", () => {
    const a = laplaceTransitions([0, 1, 2, 2, 1, 0, 0, 2, 1], 3, 0.1)
    for (const horizon of [1, 2, 5, 17, 50]) {
      const power = matrixPower(a, horizon)
      for (const row of power) close(row.reduce((sum, p) => sum + p, 0), 1, `A^${horizon}`)
    }
    assert.deepStrictEqual(forecast(a, 2, 1), a[2], "one step ahead is the current state's row")
    const far = forecast(transitions, 0, 50)
    // The stationary distribution of [[.7,.3],[.4,.6]] is [4/7, 3/7].
    close(far[0]!, 4 / 7)
    close(far[1]!, 3 / 7)
  })

  it("emissions are a softmax over states of κ·cosine", () => {
    const rows = logEmissions([[1, 0], [Math.SQRT1_2, Math.SQRT1_2], [0.8, 0.6]], [[1, 0], [0, 1]])
    for (const row of rows) close(row.reduce((sum, value) => sum + Math.exp(value), 0), 1)
    assert.approximately(Math.exp(rows[0]![0]!), 1 / (1 + Math.exp(-concentration)), 1e-6, "aligned with state 0")
    assert.approximately(Math.exp(rows[1]![0]!), 0.5, 1e-6, "halfway between the two")
    // cos 0.8 against 0.6: the odds are exp(κ · 0.2).
    assert.approximately(rows[2]![0]! - rows[2]![1]!, concentration * 0.2, 1e-4)
  })
})

describe("offline state labelling", () => {
  const vectors = [[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.1, 0.9, 0], [1, 0.05, 0], [0, 0.95, 0.05]]

  it("k-means is deterministic and numbers clusters by first appearance", () => {
    assert.deepStrictEqual(kMeans(vectors, 2), [0, 0, 1, 1, 0, 1])
    assert.deepStrictEqual(kMeans(vectors, 2), kMeans(vectors, 2))
    assert.deepStrictEqual([3, 8, 20, 72, 500].map(clusterCount), [2, 2, 3, 6, 6])
  })

  it("names each cluster from the words that set its facts apart, never the entity's own name", () => {
    const facts = [
      "Alice studies chemistry at university",
      "Alice passed her chemistry exams",
      "Alice joined Acme as an engineer",
      "Alice leads the engineer team at Acme",
      "Alice finished a chemistry thesis",
      "Alice got promoted at Acme"
    ].map((text, index) => ({ text, embedding: vectors[index]! }))
    const labelling = offlineLabelling(facts, "Alice")
    assert.strictEqual(labelling.vocabulary.length, 2)
    assert.match(labelling.vocabulary[0]!, /^CHEMISTRY/)
    assert.match(labelling.vocabulary[1]!, /^ACME/)
    assert.notInclude(labelling.vocabulary.join(" "), "ALICE")
    assert.deepStrictEqual(labelling.labels.map((label) => labelling.vocabulary.indexOf(label)), [0, 0, 1, 1, 0, 1])
  })

  it("a model's answer is normalised to SCREAMING_SNAKE with one label per fact", () => {
    const normalized = normalizeLabelling({
      vocabulary: ["early career", "Early Career", "senior"],
      labels: ["early career", "manager"]
    }, 3)
    assert.deepStrictEqual(normalized.vocabulary, ["EARLY_CAREER", "SENIOR", "MANAGER"])
    assert.deepStrictEqual(normalized.labels, ["EARLY_CAREER", "MANAGER", "MANAGER"])
  })
})

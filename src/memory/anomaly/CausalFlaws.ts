/**
 * Flaws in causal chains around new statements: cycles, a cause placed after its effect, a causal step between
 * statements too unlike each other to follow, and an opinion with no fact near it. Links are normalised to
 * cause → effect edges first (`caused_by` points the other way; `prevents` is not a causal chain). Pure.
 */
import { clamp01, type Detected, pairKeyOf, round } from "./Detected.ts"

export const flawPolicy = {
  /** A cause a week or more after its effect is as severe as it gets. */
  temporalViolationFullSeconds: 7 * 86_400,
  missingStepMaxSimilarity: 0.3,
  missingStepSeverity: 0.5,
  circularSeverity: 1,
  /** An opinion needs a world or experience fact within this cosine distance (similarity above 0.6). */
  opinionSupportMaxDistance: 0.4,
  unsupportedOpinionSeverity: 0.4,
  /** Longest cycle looked for: the walk is bounded, whatever the graph. */
  maxCycleLength: 6
}

export interface CausalLink {
  readonly fromId: string
  readonly toId: string
  readonly linkType: string
}

export interface CausalEdge {
  readonly cause: string
  readonly effect: string
}

export const causalEdge = (link: CausalLink): CausalEdge | null =>
  link.linkType === "causes" || link.linkType === "enables"
    ? { cause: link.fromId, effect: link.toId }
    : link.linkType === "caused_by"
    ? { cause: link.toId, effect: link.fromId }
    : null

export interface UnitFacts {
  readonly occurredStart: Date | null
  readonly contentHash: string
}

/** Every simple cycle through one of `starts` (up to `maxCycleLength` units), each once whatever its rotation. */
export const findCycles = (edges: ReadonlyArray<CausalEdge>, starts: ReadonlyArray<string>): Array<Array<string>> => {
  const next = new Map<string, Array<string>>()
  for (const edge of edges) {
    if (edge.cause === edge.effect) continue
    const list = next.get(edge.cause) ?? []
    if (!list.includes(edge.effect)) list.push(edge.effect)
    next.set(edge.cause, list)
  }
  const cycles = new Map<string, Array<string>>()
  const walk = (start: string, node: string, path: Array<string>) => {
    for (const target of next.get(node) ?? []) {
      if (target === start) {
        const key = [...path].sort().join("|")
        if (!cycles.has(key)) cycles.set(key, [...path, start])
      } else if (!path.includes(target) && path.length < flawPolicy.maxCycleLength) {
        walk(start, target, [...path, target])
      }
    }
  }
  for (const start of new Set(starts)) walk(start, start, [start])
  return [...cycles.values()]
}

export const detectFlaws = (input: {
  readonly links: ReadonlyArray<CausalLink & { readonly similarity: number | null }>
  /** Links of the neighbourhood, for cycles longer than one hop. */
  readonly neighbourhood: ReadonlyArray<CausalLink>
  readonly units: ReadonlyMap<string, UnitFacts>
  readonly newIds: ReadonlyArray<string>
}): Array<Detected> => {
  const found: Array<Detected> = []
  const hashOf = (id: string) => input.units.get(id)?.contentHash ?? id
  const all = [...input.links, ...input.neighbourhood].map(causalEdge).filter((edge) => edge !== null)
  for (const cycle of findCycles(all, input.newIds)) {
    found.push({
      type: "flaw_circular",
      severity: flawPolicy.circularSeverity,
      unitIds: cycle.slice(0, -1),
      entityIds: [],
      description: "A causal chain leads back to where it started.",
      metadata: { cycle },
      pairKey: pairKeyOf(cycle.map(hashOf))
    })
  }
  const seen = new Set<string>()
  for (const link of input.links) {
    const edge = causalEdge(link)
    if (edge === null || seen.has(`${edge.cause}>${edge.effect}`)) continue
    seen.add(`${edge.cause}>${edge.effect}`)
    const pairKey = pairKeyOf([hashOf(edge.cause), hashOf(edge.effect)])
    const causeAt = input.units.get(edge.cause)?.occurredStart ?? null
    const effectAt = input.units.get(edge.effect)?.occurredStart ?? null
    if (causeAt !== null && effectAt !== null && causeAt.getTime() > effectAt.getTime()) {
      const deltaSeconds = (causeAt.getTime() - effectAt.getTime()) / 1000
      found.push({
        type: "flaw_temporal_violation",
        severity: round(clamp01(deltaSeconds / flawPolicy.temporalViolationFullSeconds)),
        unitIds: [edge.cause, edge.effect],
        entityIds: [],
        description: "A cause is dated after its effect.",
        metadata: { delta_seconds: deltaSeconds, link_type: link.linkType },
        pairKey
      })
    }
    if (link.similarity !== null && link.similarity < flawPolicy.missingStepMaxSimilarity) {
      found.push({
        type: "flaw_missing_step",
        severity: flawPolicy.missingStepSeverity,
        unitIds: [edge.cause, edge.effect],
        entityIds: [],
        description: "A causal link joins statements too unlike each other: a step seems to be missing.",
        metadata: { similarity: round(link.similarity), link_type: link.linkType },
        pairKey
      })
    }
  }
  return found
}

/** An opinion with no supporting fact close to it. `nearestFactDistance` is null when the bank has no fact. */
export const unsupportedOpinion = (
  opinion: { readonly id: string; readonly contentHash: string },
  nearestFactDistance: number | null
): Detected | null =>
  nearestFactDistance !== null && nearestFactDistance < flawPolicy.opinionSupportMaxDistance
    ? null
    : {
      type: "flaw_unsupported_opinion",
      severity: flawPolicy.unsupportedOpinionSeverity,
      unitIds: [opinion.id],
      entityIds: [],
      description: "An opinion has no supporting fact.",
      metadata: { nearest_fact_distance: nearestFactDistance === null ? null : round(nearestFactDistance) },
      pairKey: pairKeyOf([opinion.contentHash])
    }

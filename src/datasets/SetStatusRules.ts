/**
 * Which status changes a client may ask for with PATCH. `retained` is reached only through POST retain (which
 * links the memories it made) and left only by archiving or reverting, so a set never claims memories it lacks.
 */
import type { SetStatus } from "../domain/Dataset.ts"

const allowed: Record<SetStatus, ReadonlyArray<SetStatus>> = {
  draft: ["ready", "archived"],
  ready: ["draft", "archived"],
  retained: ["archived"],
  archived: ["draft"]
}

/** Null when the change is allowed (or no change), else why not. */
export const statusChangeProblem = (from: SetStatus, to: SetStatus): string | null => {
  if (from === to) return null
  if (to === "retained") return "a set becomes retained only through POST .../forge/taste/retain"
  return allowed[from].includes(to)
    ? null
    : `cannot change from ${from} to ${to}; allowed from ${from}: ${allowed[from].join(", ")}`
}

export const statusRulesDescription =
  "draft → ready | archived; ready → draft | archived; retained → archived; archived → draft; `retained` only " +
  "through POST retain; revert returns any set to draft"

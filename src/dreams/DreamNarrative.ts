/**
 * The run's narrative page, rendered by engram from the structured result. Every piece of text is HTML-escaped,
 * so nothing a model or a memory wrote can become markup; the model's own narrative is never shown. The page is
 * clipped to the bank's `max_artifact_bytes` on an element boundary.
 */
import type { MaturityTier } from "./DreamEvidence.ts"
import type { DreamDraft } from "./DreamResult.ts"

export const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\"", "&quot;")
    .replaceAll("'", "&#39;")

const section = (title: string, entries: ReadonlyArray<string>) =>
  entries.length === 0
    ? ""
    : `<section><h2>${escapeHtml(title)}</h2><ul>${
      entries.map((entry) => `<li>${escapeHtml(entry)}</li>`).join("")
    }</ul></section>`

export interface NarrativeMeta {
  readonly bankId: string
  readonly runId: string
  readonly quality: number
  readonly at: string
  readonly tier: MaturityTier
  readonly generator: "llm" | "deterministic"
  readonly maxBytes: number
}

export const renderNarrativeHtml = (draft: DreamDraft, meta: NarrativeMeta): string => {
  const head = `<article class="dream"><header><h1>Dream summary (${escapeHtml(meta.tier)} bank)</h1>` +
    `<p class="meta">bank=${escapeHtml(meta.bankId)} | run=${escapeHtml(meta.runId)} | quality=${
      meta.quality.toFixed(3)
    }` +
    ` | generator=${meta.generator} | at=${escapeHtml(meta.at)}</p></header><p>${
      escapeHtml(draft.summary.slice(0, 1500))
    }</p>`
  const parts = [
    section("Hypotheses", draft.hypotheses.slice(0, 3)),
    section(
      "Predictions",
      draft.predictions.slice(0, 3).map((p) =>
        `[${p.horizon}] ${p.title}: ${p.description} (confidence ${p.confidence.toFixed(2)}; validate with ${
          p.success_criteria.slice(0, 2).join("; ") || "new evidence"
        })`
      )
    ),
    section("Growth", draft.growth.slice(0, 2).map((g) => `${g.title}: ${g.description}`)),
    section("Risks", draft.risks.slice(0, 2)),
    section("Opportunities", draft.opportunities.slice(0, 2)),
    section("Validations", draft.validations.slice(0, 3))
  ].filter((part) => part !== "")
  const tail = "</article>"
  const clipped = "<!-- clipped for size -->"
  let html = head
  for (const part of parts) {
    if (Buffer.byteLength(html + part + tail) > meta.maxBytes) return html + clipped + tail
    html += part
  }
  return html + tail
}

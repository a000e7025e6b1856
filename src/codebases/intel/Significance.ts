/**
 * Code intelligence per chunk (behaviour reference §10.3–10.5): safety tags from the built-in patterns,
 * complexity density, exportness, the weighted significance score and the auto-route hint that the triage
 * thresholds decide. Pure functions.
 */
import type { FileRole } from "../source/FileClassifier.ts"
import { dismissRoles, highValueRoles, roleWeights } from "../source/FileClassifier.ts"

export interface TriageSettings {
  readonly score_threshold_high: number
  readonly centrality_threshold: number
  readonly safety_threshold: number
  readonly embedding_provider: string
  readonly enable_safety_scan: boolean
  readonly enable_rulescan: boolean
  readonly rulescan_rulepack: string | null
  readonly code_index_path: string | null
}

export const defaultTriageSettings: TriageSettings = {
  score_threshold_high: 0.62,
  centrality_threshold: 0.35,
  safety_threshold: 0.25,
  embedding_provider: "local_embedding",
  enable_safety_scan: true,
  enable_rulescan: false,
  rulescan_rulepack: null,
  code_index_path: null
}

const safetyPatterns: ReadonlyArray<readonly [string, RegExp, number]> = [
  [
    "auth",
    /\b(login|logout|authenticate|authorise|authorize|jwt|oauth|password|hash_password|verify_password|access_token|refresh_token|bearer|session|csrf|saml|sso|api_key)\b/i,
    0.9
  ],
  [
    "crypto",
    /\b(encrypt|decrypt|aes|rsa|ecdsa|ed25519|sha256|sha512|hmac|cipher|nonce|private_key|public_key|crypto|fernet|kms|kdf|pbkdf2|scrypt|argon2|bcrypt)\b/i,
    0.9
  ],
  ["eval", /\b(eval|exec|compile|Function\s*\()\s*\(/i, 0.85],
  [
    "deserialization",
    /\b(pickle\.loads?|cPickle\.loads?|yaml\.load\s*\(|marshal\.loads?|jsonpickle\.decode|fromXmlString)/i,
    0.85
  ],
  ["sql", /\b(SELECT|INSERT|UPDATE|DELETE|CREATE TABLE|ALTER TABLE|DROP TABLE)\s/, 0.55],
  [
    "subprocess",
    /\b(subprocess\.(?:Popen|call|check_output|run|getoutput)|os\.system|os\.popen|shell\s*=\s*True|child_process|execSync|spawn\s*\()/i,
    0.55
  ],
  [
    "network",
    /\b(requests\.(?:get|post|put|delete|patch)|httpx\.(?:get|post|put|delete|patch)|urllib\.request|fetch\s*\(|axios\.(?:get|post)|HttpClient)/i,
    0.4
  ]
]

export const safetyTags = (text: string): Array<string> =>
  safetyPatterns.filter(([, pattern]) => pattern.test(text)).map(([tag]) => tag).sort()

export const safetyPriority = (tags: ReadonlyArray<string>): number =>
  Math.max(0, ...safetyPatterns.filter(([tag]) => tags.includes(tag)).map(([, , weight]) => weight))

export const complexityDensity = (ccn: number) => (ccn <= 1 ? 0 : Math.min(1, Math.log2(ccn) / 6))

export const exportness = (language: string, label: string, text: string, exported: boolean | null): number => {
  if (label === "") return 0
  if (exported !== null) return exported ? 1 : 0.3
  if (language === "python") {
    return /^_[^_]/.test(label)
      ? 0
      : /^__\w+__$/.test(label)
      ? 0.7
      : /__all__/.test(text)
      ? 1
      : 0.75
  }
  if (["typescript", "tsx", "javascript", "jsx"].includes(language)) {
    return /\bexport\b/.test(text)
      ? 1
      : /^[A-Z]/.test(label)
      ? 0.7
      : 0.5
  }
  return label.startsWith("_") ? 0.2 : 0.5
}

const kindWeight = (kind: string, lines: number) => {
  if (kind === "class" || kind === "interface") return 0.95
  if (kind === "function" || kind === "method") return 0.9
  if (kind === "type" || kind === "enum") return 0.7
  if (kind === "variable") return 0.45
  if (kind === "region") return lines < 3 ? 0.05 : lines < 8 ? 0.2 : lines < 30 ? 0.4 : 0.5
  return 0.5
}

export interface SignificanceInput {
  readonly kind: string
  readonly lines: number
  readonly role: FileRole
  readonly exportness: number
  readonly centrality: number
  readonly fanin: number
  readonly complexity: number
  readonly safety: ReadonlyArray<string>
  readonly representative: boolean
  readonly changeKind: string
  readonly parseConfidence: number
}

/** Scores and their components keep 4 decimal places. */
export const round4 = (value: number) => Number(value.toFixed(4))
const routableSymbolKinds: ReadonlySet<string> = new Set(["function", "method", "class", "interface", "type"])

export const significance = (input: SignificanceInput, settings: TriageSettings) => {
  const components = {
    role_weight: roleWeights[input.role],
    symbol_kind_weight: kindWeight(input.kind, input.lines),
    exportness: input.exportness,
    pagerank_centrality: input.centrality,
    fanin: Math.min(1, Math.log(1 + input.fanin) / Math.log(50)),
    complexity_density: complexityDensity(input.complexity),
    safety_priority: safetyPriority(input.safety),
    cluster_representativeness: input.representative ? 1 : 0.4,
    change_boost: input.changeKind === "added" ? 1 : input.changeKind === "modified" ? 0.8 : 0,
    parse_confidence: input.parseConfidence
  }
  const score = round4(
    Math.min(
      1,
      Math.max(
        0,
        0.18 * components.role_weight + 0.12 * components.symbol_kind_weight + 0.10 * components.exportness +
          0.20 * components.pagerank_centrality + 0.08 * components.fanin + 0.06 * components.complexity_density +
          0.10 * components.safety_priority + 0.06 * components.cluster_representativeness +
          0.05 * components.change_boost +
          0.05 * components.parse_confidence
      )
    )
  )
  const [hint, reason]: readonly [string, string] = dismissRoles.has(input.role) ?
    ["dismiss", `auto-dismiss: ${input.role}`]
    : input.role === "test" && input.exportness < 0.6 ?
    ["dismiss", "auto-dismiss: test body"]
    : input.role === "fixture" ?
    ["dismiss", "auto-dismiss: fixture"]
    : input.kind === "region" && input.lines < 3 ?
    ["dismiss", "auto-dismiss: trivial region"]
    : input.safety.length > 0 && input.centrality >= settings.safety_threshold
    ? ["memory", `auto-memory: safety-critical (${input.safety.join(", ")}) + central`]
    : highValueRoles.has(input.role) && routableSymbolKinds.has(input.kind) && score >= settings.score_threshold_high
    ? ["memory", `auto-memory: high-value role (${input.role}) + symbol`]
    : score >= settings.score_threshold_high && input.exportness >= 0.6 &&
        input.centrality >= settings.centrality_threshold
    ? ["memory", "auto-memory: exported + central"]
    : ["review", "gray zone: human decides"]
  // Written out rather than mapped over the entries: this runs once per chunk (28.8k times for a 200k-line tree),
  // and the generic copy through Object.entries/fromEntries was most of an import's scoring time.
  const rounded = {
    role_weight: round4(components.role_weight),
    symbol_kind_weight: round4(components.symbol_kind_weight),
    exportness: round4(components.exportness),
    pagerank_centrality: round4(components.pagerank_centrality),
    fanin: round4(components.fanin),
    complexity_density: round4(components.complexity_density),
    safety_priority: round4(components.safety_priority),
    cluster_representativeness: round4(components.cluster_representativeness),
    change_boost: round4(components.change_boost),
    parse_confidence: round4(components.parse_confidence),
    score,
    route_hint: hint,
    reason
  }
  return { score, components: rounded, hint, reason }
}

/** The stored order of a chunk's significance components; the route hint comes last. */
const componentKeys = [
  "role_weight",
  "symbol_kind_weight",
  "exportness",
  "pagerank_centrality",
  "fanin",
  "complexity_density",
  "safety_priority",
  "cluster_representativeness",
  "change_boost",
  "parse_confidence"
] as const

/**
 * A chunk's components as stored: the values in `componentKeys` order, then the route hint. The score and the
 * reason are left out because the chunk keeps them in columns of their own.
 */
export const packComponents = (
  components: Readonly<Record<string, unknown>>
): Array<unknown> => [...componentKeys.map((key) => components[key] ?? null), components["route_hint"] ?? null]

/** The components as the API shows them, from the stored values and the chunk's score and reason columns. */
export const unpackComponents = (
  stored: unknown,
  score: number,
  reason: string | null
): Record<string, unknown> | null => {
  if (!Array.isArray(stored)) return stored === null || stored === undefined ? null : stored as Record<string, unknown>
  const components: Record<string, unknown> = {}
  componentKeys.forEach((key, index) => components[key] = stored[index])
  // The score column is a `real`: read back it carries float4 noise (0.4978 as 0.49779999...); scores have 4 places.
  return { ...components, score: round4(score), route_hint: stored[componentKeys.length], reason }
}

/**
 * The answer of `POST {bank}/health/llm`: for each operation that uses a language model (retain, consolidation,
 * reflect) whether its model answered a minimal request. Status only: never the provider, model, endpoint, key or
 * the provider's error text, which may echo any of them.
 */
import { Schema } from "effect"

export const LlmHealthStatus = Schema.Literals(["connected", "not_configured", "auth_failed", "unreachable", "timeout"])
export type LlmHealthStatus = typeof LlmHealthStatus.Type

export const LlmOperationHealth = Schema.Struct({
  operation: Schema.Literals(["retain", "consolidation", "reflect"]),
  ok: Schema.Boolean.annotate({ description: "true only when the probe connected" }),
  status: LlmHealthStatus.annotate({
    description: "'not_configured' when no language model is set (the offline default); 'auth_failed' when the " +
      "provider refused the key; 'unreachable' when the call failed; 'timeout' when it did not answer in time"
  }),
  latency_ms: Schema.NullOr(Schema.Number).annotate({ description: "round trip of the probe, when one was sent" })
}).annotate({ identifier: "LlmOperationHealth" })

export const BankLlmHealthResponse = Schema.Struct({
  bank_id: Schema.String,
  operations: Schema.Array(LlmOperationHealth)
}).annotate({ identifier: "BankLlmHealthResponse" })

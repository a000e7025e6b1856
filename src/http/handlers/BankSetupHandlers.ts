/**
 * REST handlers for a bank's background (appended to its mission through `Banks`, so a mission change regenerates
 * observations as any other would) and for the check of its language models (`Llm.probe`).
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { appendBackground } from "../../bank/BankBackground.ts"
import { Banks } from "../../bank/Banks.ts"
import { Llm } from "../../models/Llm.ts"
import { EngramApi } from "../api/Api.ts"

/** Long enough for a remote model's first token, short enough that a stalled provider answers "timeout" quickly. */
const probeTimeout = "10 seconds"

export const BankSetupHandlers = HttpApiBuilder.group(
  EngramApi,
  "bankSetup",
  Effect.fn(function*(handlers) {
    const banks = yield* Banks
    const llm = yield* Llm
    return handlers.handleAll({
      addBackground: Effect.fn(function*({ params, payload }) {
        // Read and write are not atomic: of two backgrounds sent at the same instant one may be lost. Acceptable
        // for a deprecated route that clients call once at start-up.
        const current = yield* banks.ensure(params.bank_id)
        const mission = appendBackground(current.reflectMission, payload.content)
        const saved = mission === current.reflectMission
          ? current
          : yield* banks.put(params.bank_id, { reflect_mission: mission })
        return { mission: saved.reflectMission ?? "", background: saved.reflectMission, disposition: saved.disposition }
      }),
      testLlm: Effect.fn(function*({ params }) {
        yield* banks.get(params.bank_id)
        const probes = yield* llm.probe(probeTimeout)
        return {
          bank_id: params.bank_id,
          operations: (["retain", "consolidation", "reflect"] as const).map((operation) => ({
            operation,
            ok: probes[operation].status === "connected",
            status: probes[operation].status,
            latency_ms: probes[operation].latencyMs
          }))
        }
      })
    })
  })
)

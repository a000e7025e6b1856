/**
 * What a receiver gets: the JSON body of an event and the headers that identify and sign it. The body is
 * serialised once, when the delivery is queued, and the same bytes are sent (and signed) on every attempt.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import type { BankEvent } from "../events/BankEvents.ts"

/** `sha256=<hex HMAC-SHA256 of the raw body, keyed with the webhook's secret>`; sent only when a secret is set. */
export const signatureHeader = "x-engram-signature"
export const eventHeader = "x-engram-event"
export const eventIdHeader = "x-engram-event-id"
export const deliveryHeader = "x-engram-delivery"

/**
 * `{id, event, bank_id, operation_id, status, timestamp, data}`: `id` is the event id (the same on every
 * attempt and for every webhook, so receivers can drop repeats), `event` its type.
 */
export const eventBody = (event: BankEvent): string => {
  const operationId = event.data["operation_id"]
  const status = event.data["status"]
  return JSON.stringify({
    id: event.eventId,
    event: event.type,
    bank_id: event.bankId,
    operation_id: typeof operationId === "string" ? operationId : null,
    status: typeof status === "string" ? status : event.type === "operation.failed" ? "failed" : "completed",
    timestamp: event.occurredAt,
    data: event.data
  })
}

export const sign = (secret: string, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`

/** How a receiver verifies a delivery: recompute over the raw body and compare in constant time. */
export const verify = (secret: string, body: string, header: string | undefined): boolean => {
  if (header === undefined) return false
  const expected = Buffer.from(sign(secret, body))
  const given = Buffer.from(header)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

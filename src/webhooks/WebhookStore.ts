/**
 * The webhooks and webhook_deliveries tables. Deliveries are the durable outbox: a row per (event, webhook),
 * claimed by the delivery worker when due, settled after each attempt. Claims expire, so a worker that died
 * mid-send gives its deliveries back; nothing here sends anything.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { BankEvent, EventType } from "../events/BankEvents.ts"
import type { HttpConfig } from "./WebhookSchemas.ts"
import { defaultHttpConfig } from "./WebhookSchemas.ts"
import { makeCoalesced } from "../storage/Coalesced.ts"

/** An event to queue for the bank's webhooks, with the body they are sent. */
interface Enqueued {
  readonly event: BankEvent
  readonly body: string
}

export interface WebhookRecord {
  readonly id: string
  readonly bankId: string
  readonly url: string
  readonly secret: string | null
  readonly eventTypes: ReadonlyArray<EventType>
  readonly enabled: boolean
  readonly httpConfig: HttpConfig
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface NewWebhook {
  readonly url: string
  readonly secret: string | null
  readonly eventTypes: ReadonlyArray<EventType>
  readonly enabled: boolean
  readonly httpConfig: HttpConfig
}

/** A delivery as the worker needs it: what to send, where, and how. */
export interface DueDelivery {
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly eventType: string
  readonly body: string
  readonly attempts: number
  readonly url: string
  readonly secret: string | null
  readonly httpConfig: HttpConfig
}

export interface AttemptOutcome {
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly responseBody: string | null
}

export interface DeliveryRecord {
  readonly id: string
  readonly webhookId: string
  readonly url: string
  readonly eventId: string
  readonly eventType: string
  readonly body: string
  readonly status: "pending" | "completed" | "failed"
  readonly attempts: number
  readonly nextAttemptAt: string
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly lastResponseBody: string | null
  readonly lastAttemptAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly history: ReadonlyArray<{
    readonly attempt: number
    readonly statusCode: number | null
    readonly durationMs: number
    readonly error: string | null
    readonly attemptedAt: string
  }>
}

/** Longer than any request may take (timeouts are capped at 300 s): an older claim belongs to a dead worker. */
const claimLease = "15 minutes"

/** Microsecond ISO text, so a `created_at` handed out as a cursor compares exactly with the stored value. */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const withDefaults = (stored: unknown): HttpConfig => ({
  ...defaultHttpConfig,
  ...(typeof stored === "string" ? JSON.parse(stored) : (stored as object | null) ?? {})
})

interface WebhookRow extends Omit<WebhookRecord, "httpConfig"> {
  readonly httpConfig: unknown
}
const toWebhook = (row: WebhookRow): WebhookRecord => ({ ...row, httpConfig: withDefaults(row.httpConfig) })

export class WebhookStore extends Context.Service<WebhookStore, {
  readonly create: (bankId: string, webhook: NewWebhook) => Effect.Effect<WebhookRecord>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<WebhookRecord>>
  readonly find: (bankId: string, id: string) => Effect.Effect<Option.Option<WebhookRecord>>
  /** Writes the webhook back; none when it no longer exists. */
  readonly save: (webhook: WebhookRecord) => Effect.Effect<Option.Option<WebhookRecord>>
  readonly remove: (bankId: string, id: string) => Effect.Effect<boolean>
  /** One pending delivery per enabled webhook of the bank subscribed to the event; returns how many are new. */
  readonly enqueue: (event: BankEvent, body: string) => Effect.Effect<number>
  /** Claims up to `limit` due deliveries of enabled webhooks, oldest due first. */
  readonly claimDue: (limit: number) => Effect.Effect<ReadonlyArray<DueDelivery>>
  /**
   * Milliseconds until the next delivery falls due (0 when one is due now; a claimed one when its lease runs
   * out), or none when nothing is pending.
   */
  readonly nextDueInMillis: Effect.Effect<Option.Option<number>>
  /** Records the attempt and settles the delivery: completed, failed, or pending again after `retryAfterSeconds`. */
  readonly recordAttempt: (
    delivery: DueDelivery,
    outcome: AttemptOutcome,
    next: { readonly status: "completed" | "failed" } | {
      readonly status: "pending"
      readonly retryAfterSeconds: number
    }
  ) => Effect.Effect<void>
  /** Gives a claimed delivery back without counting an attempt (shutdown mid-send). */
  readonly release: (deliveryId: string) => Effect.Effect<void>
  /** At start: claims left by a process that died are given back, so its pending deliveries go out now. */
  readonly releaseAllClaims: Effect.Effect<number>
  readonly deliveries: (
    webhookId: string,
    page: { readonly limit: number; readonly cursor: string | undefined }
  ) => Effect.Effect<{ readonly items: ReadonlyArray<DeliveryRecord>; readonly nextCursor: string | null }>
}>()("engram/webhooks/WebhookStore") {
  static readonly layer = Layer.effect(
    WebhookStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const create = Effect.fn("WebhookStore.create")(function*(bankId: string, webhook: NewWebhook) {
        const rows = yield* sql<WebhookRow>`
          INSERT INTO webhooks (id, bank_id, url, secret, event_types, enabled, http_config)
          VALUES (${crypto.randomUUID()}, ${bankId}, ${webhook.url}, ${webhook.secret}, ${[
          ...webhook.eventTypes
        ]}::text[],
            ${webhook.enabled}, ${JSON.stringify(webhook.httpConfig)}::jsonb)
          RETURNING *`.pipe(Effect.orDie)
        return toWebhook(rows[0]!)
      })

      const save = Effect.fn("WebhookStore.save")(function*(webhook: WebhookRecord) {
        const rows = yield* sql<WebhookRow>`
          UPDATE webhooks SET url = ${webhook.url}, secret = ${webhook.secret},
            event_types = ${[...webhook.eventTypes]}::text[], enabled = ${webhook.enabled},
            http_config = ${JSON.stringify(webhook.httpConfig)}::jsonb, updated_at = clock_timestamp()
          WHERE bank_id = ${webhook.bankId} AND id = ${webhook.id}
          RETURNING *`.pipe(Effect.orDie)
        return Option.map(Option.fromNullishOr(rows[0]), toWebhook)
      })

      // A webhook a memory repo restored without its URL (URLs are never in commits) has '' and gets nothing.
      // `created_at` is the paging cursor, so it must order a webhook's deliveries strictly; PGlite's clock only
      // ticks in milliseconds, so a delivery is stamped at least a microsecond after the webhook's previous one.
      // Every retain emits an event: concurrent ones share a statement (`Coalesced`). Within it, a webhook's
      // deliveries are stamped a microsecond apart in the events' order, as separate statements would have been.
      const enqueueAll = (events: ReadonlyArray<Enqueued>) => {
        const rows = events.map(({ event, body }, index) => ({
          ord: index,
          eventId: event.eventId,
          type: event.type,
          bankId: event.bankId,
          body
        }))
        // Each webhook's first stamp is taken once (a materialised CTE: `clock_timestamp()` is volatile), and its
        // deliveries follow it a microsecond apart: stamps taken row by row could tie or cross on PostgreSQL's clock.
        return sql<{ eventId: string }>`
          WITH targets AS (
            SELECT w.id AS webhook_id, w.bank_id, x."eventId" AS event_id, x.type, x.body,
              row_number() OVER (PARTITION BY w.id ORDER BY x.ord) AS n
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS x(ord int, "eventId" text, type text, "bankId" text, body text)
            JOIN webhooks w ON w.bank_id = x."bankId" AND w.enabled AND w.url <> '' AND x.type = ANY (w.event_types)
          ), firsts AS MATERIALIZED (
            SELECT h.webhook_id, greatest(clock_timestamp(), (SELECT max(d.created_at) + interval '1 microsecond'
              FROM webhook_deliveries d WHERE d.webhook_id = h.webhook_id)) AS stamp
            FROM (SELECT DISTINCT webhook_id FROM targets) h
          )
          INSERT INTO webhook_deliveries (id, webhook_id, bank_id, event_id, event_type, body, status, created_at)
          SELECT gen_random_uuid()::text, t.webhook_id, t.bank_id, t.event_id, t.type, t.body, 'pending',
            f.stamp + (t.n - 1) * interval '1 microsecond'
          FROM targets t JOIN firsts f ON f.webhook_id = t.webhook_id
          ON CONFLICT (webhook_id, event_id) DO NOTHING
          RETURNING event_id`.pipe(
          Effect.map((inserted) => {
            const counts = new Map<string, number>()
            for (const row of inserted) counts.set(row.eventId, (counts.get(row.eventId) ?? 0) + 1)
            return events.map(({ event }) => counts.get(event.eventId) ?? 0)
          })
        )
      }

      const enqueueCoalesced = yield* makeCoalesced({
        name: "WebhookStore.enqueue",
        maxBatch: 200,
        batch: enqueueAll
      })
      const enqueue = (event: BankEvent, body: string) =>
        enqueueCoalesced({ event, body }).pipe(Effect.orDie, Effect.withSpan("WebhookStore.enqueue"))

      const claimDue = Effect.fn("WebhookStore.claimDue")(function*(limit: number) {
        const rows = yield* sql<Omit<DueDelivery, "httpConfig"> & { httpConfig: unknown }>`
          WITH due AS (
            SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND w.enabled
              AND (d.claimed_at IS NULL OR d.claimed_at < now() - ${claimLease}::interval)
            ORDER BY d.next_attempt_at
            LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          ), claimed AS (
            UPDATE webhook_deliveries d SET claimed_at = now() FROM due WHERE d.id = due.id
            RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.body, d.attempts
          )
          SELECT c.*, w.url, w.secret, w.http_config FROM claimed c JOIN webhooks w ON w.id = c.webhook_id`.pipe(
          Effect.orDie
        )
        return rows.map((row) => ({ ...row, httpConfig: withDefaults(row.httpConfig) }))
      })

      // `min` over no rows is NULL and must stay none: `greatest(0, NULL)` is 0 in PostgreSQL, which read as
      // "due now" with an empty outbox and kept the worker spinning. A claimed row falls due again when its lease
      // runs out (its worker died), the same rule `claimDue` applies.
      const nextDueInMillis = sql<{ wait: number | null }>`
        SELECT (extract(epoch FROM min(CASE WHEN d.claimed_at IS NULL THEN d.next_attempt_at
          ELSE greatest(d.next_attempt_at, d.claimed_at + ${claimLease}::interval) END) - now()) * 1000)::float8 AS wait
        FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'pending' AND w.enabled`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]?.wait), (wait) => Math.max(0, wait)))
      )

      const recordAttempt = Effect.fn("WebhookStore.recordAttempt")(function*(
        delivery: DueDelivery,
        outcome: AttemptOutcome,
        next: { readonly status: "completed" | "failed" } | {
          readonly status: "pending"
          readonly retryAfterSeconds: number
        }
      ) {
        const attempt = delivery.attempts + 1
        const retryAfter = next.status === "pending" ? next.retryAfterSeconds : 0
        yield* Effect.all([
          // The webhook may have been deleted while the request was in flight; then there is nothing to record.
          sql`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error)
            SELECT id, ${attempt}, ${outcome.statusCode}, ${Math.round(outcome.durationMs)}, ${outcome.error}
            FROM webhook_deliveries WHERE id = ${delivery.id}
            ON CONFLICT (delivery_id, attempt) DO NOTHING`,
          sql`UPDATE webhook_deliveries SET status = ${next.status}, attempts = ${attempt}, claimed_at = NULL,
              next_attempt_at = clock_timestamp() + (${retryAfter} * interval '1 second'),
              last_status_code = ${outcome.statusCode}, last_error = ${outcome.error},
              last_response_body = ${outcome.responseBody}, last_attempt_at = clock_timestamp(),
              completed_at = ${
            next.status === "pending" ? null : sql`clock_timestamp()`
          }, updated_at = clock_timestamp()
            WHERE id = ${delivery.id}`
        ], { discard: true }).pipe(sql.withTransaction, Effect.orDie)
      })

      const deliveries = Effect.fn("WebhookStore.deliveries")(function*(
        webhookId: string,
        page: { readonly limit: number; readonly cursor: string | undefined }
      ) {
        const rows = yield* sql<Omit<DeliveryRecord, "history">>`
          SELECT d.id, d.webhook_id, w.url, d.event_id, d.event_type, d.body, d.status, d.attempts,
            ${sql.literal(isoText("d.next_attempt_at"))} AS next_attempt_at, d.last_status_code, d.last_error,
            d.last_response_body, ${sql.literal(isoText("d.last_attempt_at"))} AS last_attempt_at,
            ${sql.literal(isoText("d.created_at"))} AS created_at, ${sql.literal(isoText("d.updated_at"))} AS updated_at
          FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.webhook_id = ${webhookId}
            ${page.cursor === undefined ? sql`` : sql`AND d.created_at < ${page.cursor}::timestamptz`}
          ORDER BY d.created_at DESC, d.id
          LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        const items = rows.slice(0, page.limit)
        const attempts = items.length === 0 ? [] : yield* sql<{
          deliveryId: string
          attempt: number
          statusCode: number | null
          durationMs: number
          error: string | null
          attemptedAt: string
        }>`
          SELECT delivery_id, attempt, status_code, duration_ms, error,
            ${sql.literal(isoText("attempted_at"))} AS attempted_at
          FROM webhook_delivery_attempts WHERE delivery_id IN ${sql.in(items.map((item) => item.id))}
          ORDER BY attempt`.pipe(Effect.orDie)
        return {
          items: items.map((item) => ({
            ...item,
            history: attempts.filter((row) => row.deliveryId === item.id)
          })),
          nextCursor: rows.length > page.limit ? items[items.length - 1]!.createdAt : null
        }
      })

      return WebhookStore.of({
        create,
        list: (bankId) =>
          sql<WebhookRow>`SELECT * FROM webhooks WHERE bank_id = ${bankId} ORDER BY created_at, id`.pipe(
            Effect.orDie,
            Effect.map((rows) => rows.map(toWebhook))
          ),
        find: (bankId, id) =>
          sql<WebhookRow>`SELECT * FROM webhooks WHERE bank_id = ${bankId} AND id = ${id}`.pipe(
            Effect.orDie,
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toWebhook))
          ),
        save,
        remove: (bankId, id) =>
          sql`DELETE FROM webhooks WHERE bank_id = ${bankId} AND id = ${id} RETURNING id`.pipe(
            Effect.orDie,
            Effect.map((rows) => rows.length > 0)
          ),
        enqueue,
        claimDue,
        nextDueInMillis,
        recordAttempt,
        release: (deliveryId) =>
          sql`UPDATE webhook_deliveries SET claimed_at = NULL WHERE id = ${deliveryId} AND status = 'pending'`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        releaseAllClaims: sql`UPDATE webhook_deliveries SET claimed_at = NULL
          WHERE status = 'pending' AND claimed_at IS NOT NULL RETURNING id`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows.length)
        ),
        deliveries
      })
    })
  )
}

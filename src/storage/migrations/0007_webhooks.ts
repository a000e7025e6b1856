/**
 * Webhooks and their deliveries. A delivery is a durable row written when an event matches a webhook (one per
 * event and webhook, so a re-emitted event is not delivered twice); every attempt to send it is its own row
 * with the status code, duration and error, so the delivery history can be inspected.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhooks (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      url text NOT NULL,
      secret text,
      event_types text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      http_config jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`
  yield* sql`CREATE INDEX webhooks_bank ON webhooks (bank_id, created_at)`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      bank_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      body text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      claimed_at timestamptz,
      last_status_code integer,
      last_error text,
      last_response_body text,
      last_attempt_at timestamptz,
      completed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (webhook_id, event_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at DESC)`
  yield* sql`
    CREATE TABLE webhook_delivery_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      status_code integer,
      duration_ms integer NOT NULL,
      error text,
      attempted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (delivery_id, attempt)
    )`
})

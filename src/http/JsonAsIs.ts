/**
 * A JSON response sent as the handler built it, without the endpoint's schema encoding it again. For the hot read
 * paths only, whose response types are JSON already (strings, numbers, booleans, null, arrays and plain objects, no
 * transformation): there the encoding is an identity that walks and copies the whole value and checks every field,
 * an eighth of what a recall allocated on the server (105 of 841 MB in a sampled heap profile of one client
 * recalling for 5 s). A test per route keeps the promise: every answer decodes and encodes back to itself through the
 * declared schema, so no field escapes it and none is missing (`recall-statements.http.test.ts` for recall).
 */
import { HttpServerResponse } from "effect/http"

export const jsonAsIs = (body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), { contentType: "application/json" })

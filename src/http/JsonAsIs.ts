/**
 * A JSON response sent as the handler built it, without the endpoint's schema encoding it again. For the hot read
 * paths only, whose response types are JSON already (strings, numbers, booleans, null, arrays and plain objects, no
 * transformation): there the encoding is an identity that walks and copies the whole value and checks every field,
 * an eighth of what a recall allocated on the server (105 of 841 MB in a sampled heap profile of one client
 * recalling for 5 s). A test per route keeps the promise: every answer decodes and encodes back to itself through the
 * declared schema, so no field escapes it and none is missing (`recall-statements.http.test.ts` for recall).
 */
import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"

export const jsonAsIs = (body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), { contentType: "application/json" })

/** Items of the long list serialised between two turns of the event loop. */
const itemsPerPiece = 200

/**
 * `jsonAsIs` for an answer that carries one long list (a 10,000-row dataset import answers every set it made: 6 MB
 * of JSON, 100–260 ms of `JSON.stringify` in one piece on this machine, plus the schema's encoding before it). The
 * object is streamed as it is serialised: its other fields first, then the list a few hundred items at a time with a
 * turn of the event loop between pieces, so other requests are answered meanwhile. The list is the object's last key.
 */
export const jsonWithListInPieces = <K extends string>(
  body: { readonly [key in K]: ReadonlyArray<unknown> } & Record<string, unknown>,
  listKey: K
): HttpServerResponse.HttpServerResponse => {
  const { [listKey]: list, ...rest } = body
  const items = list as ReadonlyArray<unknown>
  // `{...rest, "list":[]}`: everything before the list's closing `]}` opens the stream.
  const opening = JSON.stringify({ ...rest, [listKey]: [] }).slice(0, -2)
  const encoder = new TextEncoder()
  const done = -1
  const piece = (from: number) => {
    const to = Math.min(items.length, from + itemsPerPiece)
    const parts = items.slice(from, to).map((item) => JSON.stringify(item)).join(",")
    const text = (from === 0 ? opening : ",") + parts + (to === items.length ? "]}" : "")
    return [encoder.encode(text), to === items.length ? done : to] as const
  }
  const pieces = Stream.unfold(0, (from: number) =>
    from === done
      ? Effect.succeed(undefined)
      : from === 0
      ? Effect.sync(() => piece(0))
      : Effect.andThen(Effect.yieldNow, Effect.sync(() => piece(from))))
  return HttpServerResponse.stream(pieces, { contentType: "application/json" })
}

/**
 * Reads at most `maxBytes` of a response body and stops: the rest is never pulled, so an endless or huge body from a
 * remote (a webhook receiver, a learn remote) costs the cap, not the service's memory until a timeout. The text is
 * decoded leniently (a multi-byte character cut at the cap becomes U+FFFD).
 */
import { Effect, Stream } from "effect"
import type { HttpClientResponse } from "effect/http"

export const cappedText = (response: HttpClientResponse.HttpClientResponse, maxBytes: number) =>
  Effect.gen(function*() {
    let taken = 0
    const chunks = yield* response.stream.pipe(
      Stream.takeWhile(() => taken < maxBytes),
      Stream.map((chunk) => {
        const kept = chunk.subarray(0, Math.max(0, maxBytes - taken))
        taken += chunk.length
        return kept
      }),
      Stream.runFold(() => [] as Array<Uint8Array>, (all, chunk) => {
        all.push(chunk)
        return all
      })
    )
    return new TextDecoder().decode(Buffer.concat(chunks))
  })

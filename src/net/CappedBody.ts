/**
 * Reading a remote's response body within a byte cap, for every outbound read (webhook receivers, learn remotes,
 * web search providers and pages, git hosts): the body is pulled chunk by chunk and the download stops at the cap,
 * so an endless or huge body costs the cap, not the service's memory until a timeout. Either the excess is an
 * error (`cappedBytes`: a partial answer is no answer) or it is cut off (`truncatedBytes`, `cappedText`: an excerpt
 * is enough). Nothing here buffers more than the cap plus one chunk.
 */
import { Data, Effect, Stream } from "effect"
import type { HttpClientResponse } from "effect/http"

/** The body went past its cap; the download was stopped there. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly maxBytes: number }> {
  override get message() {
    return `the answer is larger than ${this.maxBytes} bytes; reading stopped there`
  }
}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number) => {
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/** At most `maxBytes` of the body and whether there was more; the rest is never pulled. */
export const truncatedBytes = <E>(stream: Stream.Stream<Uint8Array, E>, maxBytes: number) =>
  Effect.gen(function*() {
    const chunks: Array<Uint8Array> = []
    let size = 0
    let truncated = false
    yield* Stream.runForEachWhile(stream, (chunk) =>
      Effect.sync(() => {
        const room = maxBytes - size
        if (chunk.byteLength > room) {
          chunks.push(chunk.subarray(0, room))
          size += room
          truncated = true
          return false
        }
        chunks.push(chunk)
        size += chunk.byteLength
        return true
      }))
    return { bytes: concat(chunks, size), truncated }
  })

/** The whole body when it is at most `maxBytes`; past that the download stops and fails with `BodyTooLarge`. */
export const cappedBytes = <E>(
  stream: Stream.Stream<Uint8Array, E>,
  maxBytes: number
): Effect.Effect<Uint8Array, E | BodyTooLarge> =>
  Effect.flatMap(
    truncatedBytes(stream, maxBytes),
    ({ bytes, truncated }) => truncated ? Effect.fail(new BodyTooLarge({ maxBytes })) : Effect.succeed(bytes)
  )

/**
 * At most `maxBytes` of a response body as text, decoded leniently (a multi-byte character cut at the cap becomes
 * U+FFFD).
 */
export const cappedText = (response: HttpClientResponse.HttpClientResponse, maxBytes: number) =>
  Effect.map(truncatedBytes(response.stream, maxBytes), ({ bytes }) => new TextDecoder().decode(bytes))

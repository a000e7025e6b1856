/**
 * A request body gathered into one buffer without one long copy at the end. Joining a large body in one piece
 * (`Buffer.concat`, as the platform's `arrayBuffer` does) held the event loop for ~450 ms on a 140 MiB `.brain`
 * import on this machine: the copy itself is fast, but it is the first write to every page of a fresh allocation, and
 * those page faults are what costs (a second copy into the same buffer takes 11 ms). So a body whose length is
 * declared is copied into a buffer of that size chunk by chunk as it arrives (each chunk's pages faulted in while the
 * next is on the wire), and a body without a declared length is joined at its end in slices of a few MiB with a
 * turn of the event loop between them.
 */
import { Effect } from "effect"

/** What one slice of a join at the end copies: ~10 ms of page faults on a slow host. */
const joinSliceBytes = 4 * 1024 * 1024
/** A body is kept as its chunks up to this size; past it, in a buffer of its declared length. */
const defaultEarlyBytes = 1024 * 1024

export interface BodyCollector {
  /** Takes the next chunk (the caller stops at its cap before passing more than it accepts). */
  readonly push: (chunk: Uint8Array) => void
  /** The body in a buffer of its own, exactly its length (`arrayBuffer` hands out the whole buffer). */
  readonly finish: Effect.Effect<Uint8Array<ArrayBuffer>>
}

/**
 * A collector for a body of `declared` bytes (the `content-length` header), or of unknown length. The buffer of the
 * declared length is made once the first MiB has come, not on the header's word: a client that declares 50 MB and
 * sends nothing holds no buffer.
 */
export const collectBody = (declared: number | undefined, earlyBytes = defaultEarlyBytes): BodyCollector => {
  const exact = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined
  let target: Uint8Array<ArrayBuffer> | undefined
  let chunks: Array<Uint8Array> = []
  let length = 0
  // More came than was declared (the parser should not let it through): chunks to the end.
  let overran = false
  const push = (chunk: Uint8Array) => {
    const end = length + chunk.length
    if (exact !== undefined && end > exact) overran = true
    if (target === undefined && !overran && exact !== undefined && end > earlyBytes) {
      target = new Uint8Array(exact)
      let at = 0
      for (const kept of chunks) {
        target.set(kept, at)
        at += kept.length
      }
      chunks = []
    }
    if (target !== undefined && !overran) target.set(chunk, length)
    else {
      if (target !== undefined) chunks = [target.subarray(0, length)]
      target = undefined
      chunks.push(chunk)
    }
    length = end
  }
  const finish = Effect.suspend(() => {
    if (target !== undefined) {
      // A body shorter than declared (the platform fails the read when the connection ends early): only its bytes.
      return Effect.succeed(length === target.length ? target : target.slice(0, length))
    }
    return joinInSlices(chunks, length)
  })
  return { push, finish }
}

/** The chunks in one buffer, a few MiB per turn of the event loop. */
const joinInSlices = (chunks: ReadonlyArray<Uint8Array>, length: number): Effect.Effect<Uint8Array<ArrayBuffer>> =>
  Effect.gen(function*() {
    const bytes = new Uint8Array(length)
    let at = 0
    let sinceYield = 0
    for (const chunk of chunks) {
      bytes.set(chunk, at)
      at += chunk.length
      sinceYield += chunk.length
      if (sinceYield >= joinSliceBytes && at < length) {
        sinceYield = 0
        yield* Effect.yieldNow
      }
    }
    return bytes
  })

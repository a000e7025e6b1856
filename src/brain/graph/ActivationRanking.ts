/**
 * Orders the nodes a spreading query reached by activation, the last step of every query: a radix sort (linear,
 * stable) for a whole result, a selection pass then a native sort for a short top-k. Pure typed-array code with
 * reusable buffers; the native sort with a comparator costs several times more and would dominate the query.
 */

/** Reusable buffers, grown to the longest list ranked. `keyFloats` and `keys` share memory on purpose. */
export interface RankBuffers {
  keyFloats: Float32Array
  keys: Uint32Array
  spareKeys: Uint32Array
  order: Int32Array
  spareOrder: Int32Array
  /** Keys for selection: activation key and position in one float64. */
  selectKeys: Float64Array
  counts: Int32Array
}

export const makeRankBuffers = (room: number): RankBuffers => {
  const keyFloats = new Float32Array(room)
  return {
    keyFloats,
    keys: new Uint32Array(keyFloats.buffer),
    spareKeys: new Uint32Array(room),
    order: new Int32Array(room),
    spareOrder: new Int32Array(room),
    selectKeys: new Float64Array(room),
    counts: new Int32Array(3 * 2048)
  }
}

/**
 * Ranks positions `0 .. length)` of `activation` (positive numbers): the result's first `count` entries are the
 * positions of the `count` strongest, strongest first; values equal at float32 precision keep position order.
 * The result may be one of the buffers: read it before the next call.
 */
export const rankByActivation = (
  activation: Float64Array,
  length: number,
  count: number,
  buffers: RankBuffers
): Int32Array => {
  if (length === 0) return new Int32Array(0)
  if (buffers.order.length < length) Object.assign(buffers, makeRankBuffers(Math.max(length, 2 * buffers.order.length)))
  if (count * 8 < length) return selectBest(activation, length, count, buffers.selectKeys)
  return radixOrder(activation, length, buffers)
}

const keyBits = new Float32Array(1)
const keyWord = new Uint32Array(keyBits.buffer)

/** A key that orders positive numbers descending: their float32 bits, inverted. */
const descendingKey = (value: number) => {
  keyBits[0] = value
  return 0xffff_ffff - keyWord[0]!
}

/** Least significant digit first, three passes of 11 bits; one counting pass fills all three histograms. */
const radixOrder = (activation: Float64Array, length: number, buffers: RankBuffers): Int32Array => {
  const { counts, keyFloats } = buffers
  let { keys, spareKeys, order, spareOrder } = buffers
  keyFloats.set(activation.subarray(0, length))
  counts.fill(0)
  for (let p = 0; p < length; p++) {
    const key = ~keys[p]! >>> 0
    keys[p] = key
    order[p] = p
    counts[key & 2047]!++
    counts[2048 + ((key >>> 11) & 2047)]!++
    counts[4096 + (key >>> 22)]!++
  }
  for (let shift = 0; shift < 32; shift += 11) {
    const histogram = (shift / 11) * 2048
    if (counts[histogram + ((keys[0]! >>> shift) & 2047)] === length) continue // one value: nothing moves
    let sum = 0
    for (let digit = histogram; digit < histogram + 2048; digit++) {
      const c = counts[digit]!
      counts[digit] = sum
      sum += c
    }
    for (let i = 0; i < length; i++) {
      const key = keys[i]!
      const bucket = histogram + ((key >>> shift) & 2047)
      const to = counts[bucket]!
      counts[bucket] = to + 1
      spareKeys[to] = key
      spareOrder[to] = order[i]!
    }
    const swapKeys = keys
    keys = spareKeys
    spareKeys = swapKeys
    const swapOrder = order
    order = spareOrder
    spareOrder = swapOrder
  }
  return order
}

/**
 * The best `count` positions in order. Each position becomes one float64 key, its activation key above the
 * position itself, so that selection and the native sort need no comparator.
 */
const selectBest = (activation: Float64Array, length: number, count: number, buffer: Float64Array): Int32Array => {
  const { keys, scale } = selectionKeys(activation, length, buffer)
  selectSmallest(keys, count)
  const best = keys.subarray(0, count).sort()
  const order = new Int32Array(count)
  // Division rather than `%`: on doubles `%` is a slow runtime call.
  for (let k = 0; k < count; k++) order[k] = best[k]! - Math.floor(best[k]! / scale) * scale
  return order
}

/**
 * A bound under which an activation cannot be among the `count` strongest of positions `0 .. length)`, however the
 * ties go: the `count`-th strongest activation less a margin wider than the float32 precision ranking compares at.
 * 0 when there are no more than `count`. What lets a query stop following links that can no longer make its result.
 */
export const cutoffForBest = (
  activation: Float64Array,
  length: number,
  count: number,
  buffers: RankBuffers
): number => {
  if (length <= count || count <= 0) return 0
  if (buffers.selectKeys.length < length) {
    Object.assign(buffers, makeRankBuffers(Math.max(length, 2 * buffers.order.length)))
  }
  const { keys, scale, drop } = selectionKeys(activation, length, buffers.selectKeys)
  selectSmallest(keys, count)
  let weakest = keys[0]!
  for (let k = 1; k < count; k++) if (keys[k]! > weakest) weakest = keys[k]!
  const position = weakest - Math.floor(weakest / scale) * scale
  return activation[position]! * (1 - 2 ** (drop - 21))
}

/** Each position as one float64 key, its activation key above the position itself: distinct, ordered best first. */
const selectionKeys = (activation: Float64Array, length: number, buffer: Float64Array) => {
  let positionBits = 1
  while (2 ** positionBits < length) positionBits++
  const scale = 2 ** positionBits
  // Keys are exact below 2^53: past 2^21 positions the activation loses low bits (ties then go by position).
  const drop = Math.max(0, positionBits - 21)
  const keys = buffer.subarray(0, length)
  for (let p = 0; p < length; p++) keys[p] = (descendingKey(activation[p]!) >>> drop) * scale + p
  return { keys, scale, drop }
}

/** Moves the `k` smallest keys (all distinct) to the front, in no particular order (Hoare's selection). */
const selectSmallest = (keys: Float64Array, k: number) => {
  let low = 0
  let high = keys.length - 1
  while (low < high) {
    const middle = (low + high) >>> 1
    const a = keys[low]!
    const b = keys[middle]!
    const c = keys[high]!
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b)
    let i = low
    let j = high
    while (i <= j) {
      while (keys[i]! < pivot) i++
      while (keys[j]! > pivot) j--
      if (i <= j) {
        const swap = keys[i]!
        keys[i] = keys[j]!
        keys[j] = swap
        i++
        j--
      }
    }
    if (k - 1 <= j) high = j
    else if (k - 1 >= i) low = i
    else return
  }
}

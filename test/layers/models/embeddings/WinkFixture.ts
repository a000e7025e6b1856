/** Small documents in the shape of the wink-embeddings JSON, for the parser and conversion tests. */

/** A document shaped like the package's: header, frequency-ordered words, rows of [v..., norm, index]. */
export const winkDocument = (rows: ReadonlyArray<readonly [string, ReadonlyArray<number>]>) => {
  const dimensions = rows[0]![1].length
  const vectors = rows.map(([word, vector], index) => {
    const norm = Math.hypot(...vector)
    return `${JSON.stringify(word)}:[${[...vector, norm, index].join(",")}]`
  })
  return `{"precision":8,"l2NormIndex":${dimensions},"wordIndex":${dimensions + 1},"size":${rows.length},` +
    `"dimensions":${dimensions},"words":${JSON.stringify(rows.map(([word]) => word))},` +
    `"vectors":{${vectors.reverse().join(",")}},"unkVector":[${new Array(dimensions).fill(0).join(",")},-1]}\n`
}

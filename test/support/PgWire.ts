/** PostgreSQL wire-protocol messages the storage tests send by hand. */

/** A simple-query ('Q') message for `sql`. */
export const simpleQuery = (sql: string): Uint8Array => {
  const text = Buffer.from(`${sql}\0`)
  const message = Buffer.alloc(5 + text.length)
  message[0] = 0x51
  message.writeInt32BE(4 + text.length, 1)
  text.copy(message, 5)
  return message
}

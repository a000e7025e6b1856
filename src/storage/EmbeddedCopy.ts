/**
 * Bulk loads with `COPY` where the database takes them without the wire protocol. The SQL driver does not speak
 * `COPY`, so rows are inserted with `INSERT … SELECT unnest(…)`; but embedded PGlite reads `COPY` data from a blob
 * through its own API (on its worker thread, sent there in one message), and since PGlite is one session, that load runs in the session the SQL
 * client holds — inside the caller's open transaction, committed or rolled back with it. On PGlite the 28.8k chunk
 * rows of bench/codebase.ts's generated tree went from about 1.0 s with `INSERT` to 0.85 s with `COPY` (the server
 * evaluates no casts or subqueries per row).
 *
 * The SQL layer registers a loader for its client (`layers/storage/SqlLive.ts`); PostgreSQL registers none, and
 * callers insert as before.
 */

/** Runs `COPY … FROM '/dev/blob'` with `data` (COPY's text format) as the blob. */
export type CopyLoader = (statement: string, data: string) => Promise<void>

const loaders = new WeakMap<object, CopyLoader>()

/** Called once by the SQL layer that owns `client`. */
export const registerCopyLoader = (client: object, loader: CopyLoader): void => {
  loaders.set(client, loader)
}

/**
 * The loader for `client`, if its database takes `COPY` this way. Only inside a transaction of `client`: the load
 * bypasses the client's connection pool, and the transaction is what keeps other statements off the session
 * meanwhile.
 */
export const copyLoaderOf = (client: object): CopyLoader | undefined => loaders.get(client)

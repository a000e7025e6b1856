/**
 * The repo object store's advisory lock: every transaction that stores objects or reads a commit's objects holds it
 * shared, and a garbage-collection sweep slice (or a history purge) holds it exclusive (`GarbageCollection.ts`).
 *
 * The key is the two-part form `(hashtext('engram.repo_objects'), hashtext(current_schema()))`: the object store is
 * per schema (each tenant's tables live in its own schema of one PostgreSQL database), so one schema's sweep or long
 * fork slice must not make another schema's commits wait. Until migration 0041 it was the one-part key
 * `hashtext('engram.repo_objects')`, one key for the whole database; the two-part keys live in a different key space
 * of `pg_locks` (`objsubid` 2), so they never meet the old one. On PGlite there is one schema and one session.
 */

/** The two `int4` halves of the key, as SQL arguments of `pg_advisory_xact_lock[_shared]`. */
export const objectsLockKey = `hashtext('engram.repo_objects'), hashtext(current_schema())`

/** Held by every transaction that stores repo objects or reads a commit's objects. */
export const objectsLockShared = `SELECT pg_advisory_xact_lock_shared(${objectsLockKey})`

/** Held by a transaction that deletes repo objects: it waits until no storing or reading transaction is in flight. */
export const objectsLockExclusive = `SELECT pg_advisory_xact_lock(${objectsLockKey})`

/**
 * `@strata/store`: implementations of core's `StateStore` (a session's tracker, journal
 * memory, history and record, committed one turn at a time with compare-and-set): files
 * under `.strata/` for one machine, PostgreSQL for many, memory for tests; the session
 * key (repository identity + name) and the import of the old `.strata/` files.
 */
export * from "./FileStateStore.ts"
export * from "./PostgresStateStore.ts"
export * from "./MemoryStateStore.ts"
export * from "./identity.ts"
export * from "./legacy.ts"
export * from "./select.ts"
export {
  decodeStoredRecord,
  encodeStoredRecord,
  FILE_FORMAT_VERSION,
  type DecodedRecord,
  type StoredRecord
} from "./fileFormat.ts"

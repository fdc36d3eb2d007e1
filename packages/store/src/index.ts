/**
 * `@strata/store`: implementations of core's `StateStore` (a session's tracker, journal
 * memory, history and record, committed one turn at a time with compare-and-set): files
 * under `.strata/` for one machine, PostgreSQL for many, memory for tests; the session
 * key (repository identity + name) and the import of the old `.strata/` files.
 */
export { type DecodedRecord, decodeStoredRecord, encodeStoredRecord, StoredRecord } from "./fileFormat.ts"
export {
  FileStateStore,
  type FileStateStoreOptions,
  type FileWritePoint,
  makeFileStateStore,
  sessionDirectoryName
} from "./FileStateStore.ts"
export { repositoryIdentity, sessionKeyFor } from "./identity.ts"
export { type LegacyState, loadOrImport, readLegacyState } from "./legacy.ts"
export {
  PostgresStateStore,
  type PostgresStateStoreOptions,
  type PostgresWritePoint,
  redactSecrets
} from "./PostgresStateStore.ts"
export {
  parseStoreSpec,
  stateStore,
  type StateStoreOptions,
  STORE_ENV,
  storeLayer,
  type StoreLayerOptions,
  type StoreSpec
} from "./select.ts"

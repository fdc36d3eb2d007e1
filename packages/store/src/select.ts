/**
 * Choosing a store from one setting (`STRATA_STORE`, or `store` in a configuration
 * file): `file` (the default), `memory`, or a `postgres://` URL.
 */
import { MemoryStateStore, PathOutsideRepo, StateStore, StateStoreError, type StateStorePlugin } from "@strata/core/effect"
import { Effect, Layer } from "effect"
import { FileStateStore, type FileStateStoreOptions } from "./FileStateStore.ts"
import { sessionKeyFor } from "./identity.ts"
import { PostgresStateStore, redactSecrets, redactUrl, type PostgresStateStoreOptions } from "./PostgresStateStore.ts"

/** The environment variable that selects the store. */
export const STORE_ENV = "STRATA_STORE"

/** A store setting, parsed. */
export type StoreSpec =
  | { readonly kind: "file" }
  | { readonly kind: "memory" }
  | { readonly kind: "postgres"; readonly url: string }

/**
 * Parse a store setting: empty or `file`, `memory`, `postgres://...` or `postgresql://...`.
 * Pure; undefined for anything else.
 *
 * @example
 * ```ts
 * import { parseStoreSpec } from "@strata/store"
 * parseStoreSpec("postgres://strata@db/strata") // { kind: "postgres", url: "postgres://strata@db/strata" }
 * ```
 */
export const parseStoreSpec = (spec: string | undefined): StoreSpec | undefined => {
  const s = spec?.trim() ?? ""
  if (s === "" || s === "file") return { kind: "file" }
  if (s === "memory") return { kind: "memory" }
  if (/^postgres(ql)?:\/\//.test(s)) return { kind: "postgres", url: s }
  return undefined
}

/** Options that apply to whichever store a setting selects. */
export interface StoreLayerOptions {
  readonly repoRoot: string
  readonly file?: Omit<FileStateStoreOptions, "repoRoot"> | undefined
  readonly postgres?: Omit<PostgresStateStoreOptions, "url"> | undefined
}

/**
 * The `StateStore` layer a setting selects.
 *
 * @example
 * ```ts
 * import { storeLayer, STORE_ENV } from "@strata/store"
 * const layer = storeLayer(process.env[STORE_ENV], { repoRoot: "." })
 * ```
 */
export const storeLayer = (spec: string | undefined, options: StoreLayerOptions): Layer.Layer<StateStore, StateStoreError | PathOutsideRepo> => {
  const parsed = parseStoreSpec(spec)
  if (parsed === undefined) {
    return Layer.effect(
      StateStore,
      Effect.fail(
      new StateStoreError({
        store: redactSecrets(spec ?? ""),
        operation: "open",
        reason: `"${redactSecrets(spec ?? "")}" is not a store: use "file", "memory" or a postgres:// URL`,
        retryable: false
      })
      )
    )
  }
  switch (parsed.kind) {
    case "file":
      return FileStateStore.layer({ ...options.file, repoRoot: options.repoRoot })
    case "memory":
      return MemoryStateStore.layer
    case "postgres":
      return PostgresStateStore.layer({ ...options.postgres, url: parsed.url })
  }
}

/** Options of `stateStore`: the stores' own options, and the repository's configured identity. */
export interface StateStoreOptions extends Omit<StoreLayerOptions, "repoRoot"> {
  /** The repository's identity instead of its root commit (see `sessionKeyFor`). */
  readonly repositoryId?: string | undefined
}

/**
 * The store a setting selects, as a value for the Promise API's `createContextEngine({
 * store })`: `file` (the default), `memory` or a `postgres://` URL; without a spec, the
 * `STRATA_STORE` environment variable. A spec that is not a store fails when the engine
 * first uses it, with a `StateStoreError` that says what is accepted.
 *
 * @example
 * ```ts
 * import { stateStore } from "@strata/store"
 * const fromEnvironment = stateStore() // STRATA_STORE, else files under .strata/state
 * const shared = stateStore("postgres://strata@db.internal/app", { postgres: { poolSize: 4 } })
 * ```
 */
export const stateStore = (spec: string | undefined = process.env[STORE_ENV], options: StateStoreOptions = {}): StateStorePlugin => {
  const parsed = parseStoreSpec(spec)
  return {
    describe: parsed === undefined ? redactSecrets(spec ?? "") : parsed.kind === "postgres" ? redactUrl(parsed.url) : parsed.kind,
    layer: (repoRoot) => storeLayer(spec, { ...options, repoRoot }),
    sessionKey: (repoRoot, name) => sessionKeyFor(repoRoot, { name, repositoryId: options.repositoryId })
  }
}

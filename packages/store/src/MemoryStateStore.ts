/**
 * The in-memory `StateStore` lives in core (the Promise API's default store); it is
 * re-exported here so every store is importable from `@strata/store`.
 */
export { makeMemoryStateStore, MemoryStateStore } from "@strata/core/effect"

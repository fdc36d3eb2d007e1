/**
 * Items are the trackable pieces of content a request is built from. Each has a key
 * that names its kind and source; the tracker follows items by key across turns.
 */
import { Schema } from "effect"
import { Tier } from "./Tier.ts"

/**
 * An item key: `file:<path>`, `symbol:<path>`, `history:<index>`, `tree`,
 * `url:<url>` or `system`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ItemKey } from "@strata/core"
 * Schema.decodeUnknownSync(ItemKey)("file:src/index.ts")
 * ```
 */
export const ItemKey = Schema.Union([
  Schema.TemplateLiteral(["file:", Schema.String]),
  Schema.TemplateLiteral(["symbol:", Schema.String]),
  Schema.TemplateLiteral(["history:", Schema.Number]),
  Schema.TemplateLiteral(["url:", Schema.String]),
  Schema.Literal("tree"),
  Schema.Literal("system")
]).annotate({ identifier: "ItemKey" })
export type ItemKey = typeof ItemKey.Type

/** The kind of an item, read from its key. */
export type ItemKind = "file" | "symbol" | "history" | "url" | "tree" | "system"

/** Builders and readers for item keys, so no module spells a prefix by hand. */
export const ItemKeys = {
  file: (path: string): ItemKey => `file:${path}`,
  symbol: (path: string): ItemKey => `symbol:${path}`,
  history: (index: number): ItemKey => `history:${index}`,
  url: (url: string): ItemKey => `url:${url}`,
  tree: "tree" as ItemKey,
  system: "system" as ItemKey,
  kind: (key: string): ItemKind => {
    if (key === "tree" || key === "system") return key
    const colon = key.indexOf(":")
    const prefix = colon < 0 ? "" : key.slice(0, colon)
    switch (prefix) {
      case "file":
      case "symbol":
      case "history":
      case "url":
        return prefix
      default:
        throw new globalThis.Error(`Not an item key: ${JSON.stringify(key)}`)
    }
  },
  /** The path, URL or index part of a key (`""` for `tree` and `system`). */
  subject: (key: string): string => {
    const colon = key.indexOf(":")
    return colon < 0 ? "" : key.slice(colon + 1)
  }
} as const

/** One item of one request: its key, the SHA-256 of its content and its token count. */
export const Item = Schema.Struct({
  key: ItemKey,
  hash: Schema.String,
  tokens: Schema.Number
})
export type Item = typeof Item.Type

/** An item as the tracker holds it: with its tier and N (consecutive unchanged appearances). */
export const TrackedItem = Schema.Struct({
  key: ItemKey,
  tier: Tier,
  n: Schema.Number,
  hash: Schema.String,
  tokens: Schema.Number
})
export type TrackedItem = typeof TrackedItem.Type

/** Why an item moved between tiers (or left the tracker) in one update. */
export const ChangeReason = Schema.Literals([
  "graduated",
  "promoted",
  "hash changed",
  "not in request",
  "stale",
  "purged"
])
export type ChangeReason = typeof ChangeReason.Type

/** One move of one item in one update. `to` is `null` when the item left the tracker. */
export const TierChange = Schema.Struct({
  key: ItemKey,
  from: Schema.NullOr(Tier),
  to: Schema.NullOr(Tier),
  reason: ChangeReason
})
export type TierChange = typeof TierChange.Type

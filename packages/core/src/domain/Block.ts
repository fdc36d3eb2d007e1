/**
 * Blocks and breakpoints: the provider-neutral output of assembly. A block is the
 * messages of one tier; a breakpoint marks the last message of a cached block.
 * Provider plugins turn breakpoints into `cache_control`, `cachePoint` and the like.
 */
import { Schema } from "effect"
import { ItemKey } from "./Item.ts"
import { Message } from "./Message.ts"
import { CachedTier, Tier } from "./Tier.ts"
import { ToolDefinition } from "./Tool.ts"

/** Cache lifetime a breakpoint asks for; providers that do not support it ignore it. */
export const CacheTtl = Schema.Literals(["5m", "1h"])
export type CacheTtl = typeof CacheTtl.Type

/**
 * A provider-neutral cache mark on the last message of a cached block.
 * `messageIndex` indexes the request's flat message list.
 */
export const Breakpoint = Schema.Struct({
  tier: CachedTier,
  messageIndex: Schema.Number,
  ttl: Schema.optionalKey(CacheTtl)
})
export type Breakpoint = typeof Breakpoint.Type

/** The messages of one tier, with the items rendered into them and their token count. */
export const Block = Schema.Struct({
  tier: Tier,
  messages: Schema.Array(Message),
  items: Schema.Array(ItemKey),
  tokens: Schema.Number
})
export type Block = typeof Block.Type

/**
 * What assembly hands to a provider plugin: blocks in prefix order (L0..L3, active),
 * the flat message list they make, a breakpoint per non-empty cached block, and the
 * tools the model may call (rendered first, before the system prompt).
 */
export const NeutralRequest = Schema.Struct({
  model: Schema.String,
  tools: Schema.optionalKey(Schema.Array(ToolDefinition)),
  /**
   * The tokens of `tools` as assembly counted them, already included in the first block's
   * `tokens` (the tools lead the prefix). Plugins start the prefix with them, so a
   * breakpoint's prefix is the blocks' sum. Absent: plugins estimate the tools on top.
   */
  toolTokens: Schema.optionalKey(Schema.Number),
  blocks: Schema.Array(Block),
  messages: Schema.Array(Message),
  breakpoints: Schema.Array(Breakpoint)
})
export type NeutralRequest = typeof NeutralRequest.Type

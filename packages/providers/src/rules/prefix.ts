/**
 * Cumulative prefix tokens at every message of a request. A provider's minimum
 * cacheable length applies to the whole prefix up to a breakpoint (tools, then system,
 * then messages), so plugins need the running total, not per-block sizes.
 */
import { estimateTokens, messageParts, messageText, partImages, type Message, type NeutralRequest } from "@strata/core"

/** Rough cost of an image when nothing better is known (Anthropic: ~1.6k for 1 MP; OpenAI: 85-1.1k). */
export const IMAGE_TOKEN_ESTIMATE = 1000

/**
 * Estimated tokens of one message: its text (tool calls and results as their JSON or
 * text) at ~4 chars/token plus a fixed cost per image.
 */
export const estimateMessageTokens = (message: Message): number => {
  const images = messageParts(message).reduce((n, p) => n + partImages(p), 0)
  return estimateTokens(messageText(message)) + images * IMAGE_TOKEN_ESTIMATE
}

/**
 * Tokens of each message. When the request's blocks line up with its messages (the
 * blocks' messages concatenated are the message list, as assembly builds it), each
 * block's measured `tokens` is spread over its messages by estimated size, so the
 * cumulative count at every block end is the measured one (after `toolTokens`, which
 * the first block's count includes). Otherwise every message is estimated.
 */
export const messageTokens = (request: NeutralRequest): ReadonlyArray<number> => {
  const estimates = request.messages.map(estimateMessageTokens)
  const blockMessages = request.blocks.reduce((n, b) => n + b.messages.length, 0)
  if (request.blocks.length === 0 || blockMessages !== request.messages.length) return estimates
  const out: Array<number> = []
  let i = 0
  // Tools assembly counted are in the first block's tokens; they lead the prefix, not its messages.
  let leading = request.toolTokens ?? 0
  for (const block of request.blocks) {
    const slice = estimates.slice(i, i + block.messages.length)
    const estimated = slice.reduce((a, b) => a + b, 0)
    const own = Math.max(0, block.tokens - leading)
    leading = 0
    let assigned = 0
    slice.forEach((e, k) => {
      // The last message takes the rounding remainder so the block total is exact.
      const share = k === slice.length - 1
        ? own - assigned
        : estimated === 0 ? 0 : Math.round((own * e) / estimated)
      assigned += share
      out.push(Math.max(0, share))
    })
    i += block.messages.length
  }
  return out
}

/**
 * Cumulative prefix tokens through each message, starting after `leadingTokens`
 * (tool definitions, which every provider renders first).
 *
 * @example
 * ```ts
 * import type { NeutralRequest } from "@strata/core"
 * import { prefixTokens } from "@strata/providers"
 * const request: NeutralRequest = {
 *   model: "claude-sonnet-4-6",
 *   blocks: [],
 *   messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }],
 *   breakpoints: [{ tier: "L0", messageIndex: 0 }]
 * }
 * prefixTokens(request, 300) // tokens up to and including each message, after 300 tokens of tools
 * ```
 */
export const prefixTokens = (request: NeutralRequest, leadingTokens = 0): ReadonlyArray<number> => {
  let total = leadingTokens
  return messageTokens(request).map((t) => (total += t))
}

/**
 * The Amazon Bedrock prompt cache, offline, for Converse bodies (`cachePoint` blocks
 * in `toolConfig.tools`, `system` and message content) and InvokeModel bodies (the
 * Anthropic Messages body with `anthropic_version`). Same matching as Anthropic; the
 * minimum applies per checkpoint by default (AWS's worked example).
 */
import type { ModelLimits } from "../models.ts"
import { anthropicResult, parseAnthropicBody, simulateMarked, type AnthropicNativeUsage, type MarkedPrefix } from "./anthropic.ts"
import { asArray, asString, canonicalJson, isRecord, type PrefixBlock } from "../internal/simulators/prefixCache.ts"
import { makeContext, makeResult, neutralUsage, simulatorOf } from "../internal/simulators/result.ts"
import { SimulatedRejection, type SimResult, type Simulator, type SimulatorOptions } from "../simulation.ts"

/** `usage` of a Converse response or a ConverseStream `metadata` event. */
export interface BedrockNativeUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheWriteInputTokens: number
  readonly cacheDetails?: ReadonlyArray<{ readonly ttl: string; readonly inputTokens: number }>
}

const reject = (reason: string): never => {
  throw new SimulatedRejection({ provider: "bedrock", reason: `ValidationException: ${reason}` })
}

const contentText = (block: Record<string, unknown>, imageTokens: number): { text: string; extra: number } => {
  if (typeof block["text"] === "string") return { text: block["text"], extra: 0 }
  if (block["image"] !== undefined || block["document"] !== undefined || block["video"] !== undefined) return { text: "", extra: imageTokens }
  if (isRecord(block["toolUse"])) {
    const use = block["toolUse"]
    return { text: `${asString(use["name"]) ?? ""} ${canonicalJson(use["input"])}`, extra: 0 }
  }
  if (isRecord(block["toolResult"])) {
    let text = ""
    let extra = 0
    for (const part of asArray(block["toolResult"]["content"])) {
      if (!isRecord(part)) continue
      if (typeof part["text"] === "string") text += part["text"]
      else if (part["json"] !== undefined) text += canonicalJson(part["json"])
      else extra += imageTokens
    }
    return { text, extra }
  }
  if (isRecord(block["reasoningContent"])) {
    const r = block["reasoningContent"]
    const reasoning = isRecord(r["reasoningText"]) ? asString(r["reasoningText"]["text"]) : undefined
    return { text: reasoning ?? "", extra: 0 }
  }
  return { text: canonicalJson(block), extra: 0 }
}

/** Read a Converse body into blocks and checkpoints. */
export const parseConverseBody = (body: Record<string, unknown>, model: string, limits: ModelLimits, imageTokens: number): MarkedPrefix => {
  const blocks: Array<PrefixBlock> = []
  const marks: Array<{ block: number; ttl: string }> = []
  const checkpoint = (cp: unknown, where: string) => {
    if (!isRecord(cp) || cp["type"] !== "default") reject(`${where}.cachePoint: type must be "default"`)
    if (blocks.length === 0) reject(`${where}: a cachePoint must follow the content it caches`)
    marks.push({ block: blocks.length - 1, ttl: asString((cp as Record<string, unknown>)["ttl"]) ?? "5m" })
  }
  const toolConfig = isRecord(body["toolConfig"]) ? body["toolConfig"] : undefined
  asArray(toolConfig?.["tools"]).forEach((tool, i) => {
    if (!isRecord(tool)) return reject(`toolConfig.tools.${i}: must be an object`)
    if (tool["cachePoint"] !== undefined) {
      if (!limits.toolBreakpoints) reject(`toolConfig.tools.${i}: ${limits.family} does not support cache checkpoints in tools`)
      return checkpoint(tool["cachePoint"], `toolConfig.tools.${i}`)
    }
    const json = canonicalJson(tool)
    blocks.push({ head: "T", body: json, text: json, extraTokens: 0 })
  })
  asArray(body["system"]).forEach((block, i) => {
    if (!isRecord(block)) return reject(`system.${i}: must be an object`)
    if (block["cachePoint"] !== undefined) return checkpoint(block["cachePoint"], `system.${i}`)
    if (typeof block["text"] === "string") {
      if (block["text"].trim().length === 0) {
        reject(`The text field in the SystemContentBlock object at system.${i} is blank. Add text to the text field, and try again.`)
      }
      blocks.push({ head: "S", body: block["text"], text: block["text"], extraTokens: 0 })
      return
    }
    const json = canonicalJson(block)
    blocks.push({ head: "S\u0000json", body: json, text: json, extraTokens: 0 })
  })
  // toolChoice and thinking settings invalidate the messages tier only.
  let salt = `\u0001${canonicalJson({ toolChoice: toolConfig?.["toolChoice"], fields: body["additionalModelRequestFields"] })}\u0001`
  const messages = asArray(body["messages"])
  if (messages.length === 0) reject("messages: at least one message is required")
  messages.forEach((message, i) => {
    if (!isRecord(message)) return reject(`messages.${i}: must be an object`)
    const role = asString(message["role"]) ?? ""
    if (role !== "user" && role !== "assistant") reject(`messages.${i}.role: must be "user" or "assistant"`)
    let first = true
    asArray(message["content"]).forEach((part, j) => {
      const where = `messages.${i}.content.${j}`
      if (!isRecord(part)) return reject(`${where}: must be an object`)
      if (part["cachePoint"] !== undefined) return checkpoint(part["cachePoint"], where)
      if (typeof part["text"] === "string" && part["text"].trim().length === 0) {
        reject(`The text field in the ContentBlock object at ${where} is blank. Add text to the text field, and try again.`)
      }
      const { text, extra } = contentText(part, imageTokens)
      const isText = typeof part["text"] === "string"
      blocks.push({ head: `${first ? `${salt}M\u0000${role}\u0000` : ""}B\u0000${isText ? "text" : "json"}`, body: isText ? text : canonicalJson(part), text, extraTokens: extra })
      first = false
      salt = ""
    })
  })
  if (marks.length > limits.maxBreakpoints) {
    reject(`The number of cache points (${marks.length}) exceeds the maximum of ${limits.maxBreakpoints} for ${model}.`)
  }
  return { model, namespace: `converse\u0000${model}`, blocks, marks }
}

/** Result of a Bedrock simulation: Converse usage, or Anthropic usage for InvokeModel bodies. */
export type BedrockSimUsage = BedrockNativeUsage | AnthropicNativeUsage

/**
 * A simulator of Bedrock's prompt cache. Bodies with `anthropic_version` are InvokeModel
 * bodies and get Anthropic-shaped usage; others are Converse bodies (`modelId` in the
 * body, or the simulator's model).
 *
 * @example
 * ```ts
 * import { makeBedrockSimulator } from "@strata/providers"
 * const sim = makeBedrockSimulator({ model: "anthropic.claude-sonnet-4-6" })
 * const body = { system: [{ text: "x".repeat(8000) }, { cachePoint: { type: "default" } }], messages: [{ role: "user", content: [{ text: "hi" }] }] }
 * sim.send(body, 0).native // { inputTokens: 1, cacheWriteInputTokens: 2000, ... }
 * ```
 */
export const makeBedrockSimulator = (options: SimulatorOptions): Simulator<BedrockSimUsage> => {
  const ctx = makeContext("bedrock", options)
  const rule = options.bedrockMinimum ?? "perCheckpoint"
  return simulatorOf("bedrock", ctx, (body, at, send): SimResult<BedrockSimUsage> => {
    if (!isRecord(body)) return reject("the request body must be a JSON object")
    if (body["anthropic_version"] !== undefined) {
      const limits = ctx.limitsFor(asString(body["model"]))
      const parsed = parseAnthropicBody(body, "bedrock", ctx.imageTokens, false, limits.maxBreakpoints)
      return anthropicResult(limits, simulateMarked(ctx, "bedrock", parsed, limits, rule, at, send), send?.outputTokens ?? 0)
    }
    const output = send?.outputTokens ?? 0
    const model = asString(body["modelId"]) ?? options.model
    const limits = ctx.limitsFor(model)
    const parsed = parseConverseBody(body, model, limits, ctx.imageTokens)
    const r = simulateMarked(ctx, "bedrock", parsed, limits, rule, at, send)
    const usage = neutralUsage(r.input, r.hitTokens, r.byTtl, output)
    const details = Object.entries(r.byTtl).filter(([, v]) => v > 0).map(([ttl, inputTokens]) => ({ ttl, inputTokens }))
    const native: BedrockNativeUsage = {
      inputTokens: r.input,
      outputTokens: output,
      totalTokens: r.input + r.hitTokens + r.written + output,
      cacheReadInputTokens: r.hitTokens,
      cacheWriteInputTokens: r.written,
      ...(details.length > 0 ? { cacheDetails: details } : {})
    }
    return makeResult(limits, usage, native, r.trace)
  })
}

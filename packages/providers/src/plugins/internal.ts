/**
 * Helpers several plugins use to build their bodies. Not re-exported from the package
 * index: they are how the plugins are written, not part of the public API.
 */
import { PlacementError } from "@strata/core"
import { lookupModel, type ModelLimits, type ProviderId } from "../models.ts"
import type { CleanMessage } from "../rules/content.ts"
import type { CommonOptions, OpenAIChatTool, ToolDefinition } from "./common.ts"

/** The limits of `model` at `provider`, as of `options.asOf`, with `options.modelTable` searched first. */
export const limitsFor = (provider: ProviderId, model: string, options: CommonOptions): ModelLimits =>
  lookupModel(provider, model, {
    ...(options.asOf === undefined ? {} : { asOf: options.asOf }),
    ...(options.modelTable === undefined ? {} : { table: options.modelTable })
  })

/** The texts of a message that may hold text only; an image is a `PlacementError` naming `role`. */
export const textOnly = (provider: string, m: CleanMessage, role: string): Array<string> =>
  m.parts.map((p) => {
    if (p.type !== "text") throw new PlacementError({ provider, reason: `${role} message ${m.index} has an image; only user messages take images` })
    return p.text
  })

/** Tool definitions as Chat Completions `tools` (OpenAI and OpenAI-compatible gateways). */
export const openAIChatTools = (tools: ReadonlyArray<ToolDefinition>): Array<OpenAIChatTool> =>
  tools.map((t) => ({
    type: "function",
    function: t.description === undefined ? { name: t.name, parameters: t.inputSchema } : { name: t.name, description: t.description, parameters: t.inputSchema }
  }))

/**
 * Helpers several plugins use to build their bodies. Not re-exported from the package
 * index: they are how the plugins are written, not part of the public API.
 */
import { PlacementError, type NeutralRequest } from "@strata/core"
import { lookupModel, type ModelEntry, type ModelLimits, type ProviderId } from "../../models.ts"
import { droppedReasoning, type CleanMessage, type KeepReasoning } from "../../rules/content.ts"

/** The limits of `model` at `provider`, as of `options.asOf`, with `options.modelTable` searched first. */
export const limitsFor = (
  provider: ProviderId,
  model: string,
  options: { readonly asOf?: string; readonly modelTable?: ReadonlyArray<ModelEntry> }
): ModelLimits =>
  lookupModel(provider, model, {
    ...(options.asOf === undefined ? {} : { asOf: options.asOf }),
    ...(options.modelTable === undefined ? {} : { table: options.modelTable })
  })

/** The texts of a message that may hold text only; an image is a `PlacementError` naming `role`. */
export const textOnly = (provider: string, m: CleanMessage, role: string): Array<string> =>
  m.parts.map((p) => {
    if (p.type !== "text") throw new PlacementError({ provider, reason: `${role} message ${m.index} has ${p.type === "image" ? "an image; only user messages take images" : `a ${p.type} part; only assistant and tool messages take those`}` })
    return p.text
  })

/** A note for the reasoning parts a plugin leaves out (none when every one is kept). */
export const reasoningNote = (request: NeutralRequest, keep: KeepReasoning, why: string): Array<string> => {
  const n = droppedReasoning(request.messages, keep)
  return n === 0 ? [] : [`${n} reasoning part${n === 1 ? "" : "s"} left out: ${why}`]
}

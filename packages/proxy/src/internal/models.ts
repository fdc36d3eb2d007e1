/**
 * The model table's row for a provider's model, looked up once per model: `lookupModel`
 * builds the row from its revisions on every call, and the proxy asks for it twice per
 * request (the transform's limits, the exchange's cost).
 */
import { lookupModel, type ModelLimits, type ProviderId } from "@strata/providers"

const MAX_MODELS = 256
const rows = new Map<string, ModelLimits>()

/** `lookupModel(provider, model)`, kept for the latest `MAX_MODELS` models. */
export const modelLimits = (provider: ProviderId, model: string): ModelLimits => {
  const key = `${provider}\u0000${model}`
  const known = rows.get(key)
  if (known !== undefined) return known
  const row = lookupModel(provider, model)
  if (rows.size >= MAX_MODELS) rows.delete(rows.keys().next().value ?? "")
  rows.set(key, row)
  return row
}

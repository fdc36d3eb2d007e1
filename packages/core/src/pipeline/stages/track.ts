/**
 * Stage 11, `track`: this request's items (key, content hash, tokens) and the tracker
 * update they make. The update stays pending: it is committed only when the request
 * succeeds, so a failed request leaves the tracker untouched.
 */
import { Context, Effect, Layer } from "effect"
import { countedTools, toolsHash } from "../../assembly/parts.ts"
import { ItemKeys, type Item } from "../../domain/Item.ts"
import { sha256 } from "../../tokens/TokenCounter.ts"
import { TIERS } from "../../domain/Tier.ts"
import type { AssemblyState, Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(TrackStage, myStage)`. */
export class TrackStage extends Context.Service<TrackStage, Stage>()("@strata/core/pipeline/Track") {
  static readonly layer: Layer.Layer<TrackStage> = Layer.sync(TrackStage, () => track)
}

export const track: Stage = {
  name: "track",
  run: (state) =>
    Effect.sync(() => {
      const update = state.tracker.update({ items: requestItems(state), existingFiles: state.symbols.existingFiles })
      return { ...state, pending: { snapshot: update.snapshot, changes: [...state.changes, ...update.changes] } }
    })
}

/**
 * The items of a request: the system prompt (with the tools), every file's symbol entry (files in context
 * included, for N-tracking), the file tree, selected files, history messages and URLs.
 * Entries are items already (key, hash, tokens), so they are passed as they are.
 */
export const requestItems = (state: AssemblyState): ReadonlyArray<Item> => {
  const out: Array<Item> = [systemItem(state)]
  for (const e of state.symbols.entries) out.push(e)
  if (state.symbols.tree !== undefined) out.push(state.symbols.tree)
  for (const f of state.files) out.push(f)
  for (const h of TIERS.flatMap((t) => state.historyTiers[t]).sort((a, b) => a.index - b.index)) out.push(h)
  for (const u of state.urls) out.push({ key: ItemKeys.url(u.url), hash: sha256(u.content.text), tokens: u.content.tokens })
  return out
}

/**
 * The `system` item: the head of every request's prefix, the system prompt and the tool
 * definitions the plugin renders before it. Either changing rewrites L0 and everything
 * after it. Without tools its hash is the system prompt's.
 */
export const systemItem = (state: AssemblyState): Item => {
  const system = state.input.systemPrompt
  const tools = countedTools(state.input.tools, state.counter)
  return tools === undefined
    ? { key: ItemKeys.system, hash: sha256(system), tokens: state.counter.count(system) }
    : { key: ItemKeys.system, hash: sha256(`${toolsHash(tools.tools)}\u0000${system}`), tokens: state.counter.count(system) + tools.tokens }
}

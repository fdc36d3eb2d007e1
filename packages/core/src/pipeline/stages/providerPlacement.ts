/**
 * Stage 10, `placement`: the layout's provider-neutral request (blocks in order, one
 * breakpoint per non-empty cached block, and the input's tools) handed to the
 * `Placement` service, the provider plugin that emits the provider's request body within
 * its caching rules.
 */
import { Context, Effect, Layer } from "effect"
import { countedTools } from "../../assembly/parts.ts"
import type { Stage } from "../base/state.ts"

/**
 * Replace this stage with `Layer.succeed(PlacementStage, myStage)`. To target another
 * provider keep the stage and provide that provider's `Placement` layer.
 */
export class PlacementStage extends Context.Service<PlacementStage, Stage>()("@strata/core/pipeline/Placement") {
  static readonly layer: Layer.Layer<PlacementStage> = Layer.sync(PlacementStage, () => placement)
}

export const placement: Stage = {
  name: "placement",
  run: (state) =>
    Effect.gen(function* () {
      const layoutRequest = state.layout.request(state)
      // The tools lead every provider's prefix whatever the layout: the plugin renders them.
      const tools = state.input.tools
      // Their tokens are in the first block's (the report counts them in L0), so the plugin
      // starts the prefix with them rather than adding its own estimate on top.
      const counted = countedTools(tools, state.counter)
      const request = counted === undefined ? layoutRequest : { ...layoutRequest, tools: counted.tools, toolTokens: counted.tokens }
      const placed = yield* state.services.placement.place(request)
      return { ...state, request, placed }
    })
}

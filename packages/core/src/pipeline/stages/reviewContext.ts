/**
 * The optional `reviewContext` stage (docs/pipeline.md): in review mode, a `# Code Review
 * Context` message between the URL context and the Working Files (acknowledged only
 * before the conversation has started). It is an extra stage, inserted after `activeBlock`
 * through `ExtraStages`.
 */
import { Effect } from "effect"
import { counted, reviewPart } from "../../assembly/parts.ts"
import { insertPart, type Stage } from "../base/state.ts"

/** Adds the review context, if the input has one, before the Working Files. */
export const reviewContext: Stage = {
  name: "reviewContext",
  run: (state) =>
    Effect.sync(() => {
      const [part] = reviewPart(counted(state.input.review ?? "", state.counter), state.counter)
      return part === undefined ? state : insertPart(state, "active", part, ["workingFiles", "prompt"])
    })
}

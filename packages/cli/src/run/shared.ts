/**
 * What the repository commands share: loading the session from its store (a repair is a
 * warning, never fatal), building the engine, and printing warnings on stderr.
 */
import type { PromptPack } from "@strata/core/effect"
import { Effect } from "effect"
import type { ConfigOverrides } from "../support/config.ts"
import { commandContext, type CommandContext } from "../support/context.ts"
import { Output } from "../support/output.ts"
import { loadForReading, loadForWriting, readOnlyCopy, sessionKey, storeChoice, type LoadedSession } from "../support/sessionState.ts"
import { makeEngine, type Engine } from "../support/wiring.ts"

export interface Prepared {
  readonly ctx: CommandContext
  /** The session as the command found it. */
  readonly state: LoadedSession
  readonly engine: Engine
  /** False when the command runs against a read-only copy of the session (dry runs, `hud`, `breakdown`). */
  readonly records: boolean
}

/**
 * The prompts of the CLI's sessions: chat's (the model reads through the repository tools
 * and proposes changes as diffs). `assemble`, `hud` and `breakdown` build the same system
 * prompt and tools as `chat`, so one session has one prefix and `chat` reads what
 * `assemble` cached.
 */
export const SESSION_PROMPT_PACK: PromptPack = "read-only"

/** Print warnings on stderr, one line each (each once per run). */
export const warn = (warnings: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const output = yield* Output
    for (const w of warnings) yield* output.warn(w)
  })

/**
 * Resolve the repository and configuration, load the session from its store and build
 * the engine. A command that records turns works on the store itself (importing the old
 * `.strata/` files once); one that only reads, or a dry run, on an in-memory copy.
 */
export const prepare = (overrides: ConfigOverrides, options: { readonly dryRun: boolean; readonly records?: boolean; readonly promptPack?: PromptPack }) =>
  Effect.gen(function* () {
    const ctx = yield* commandContext(overrides)
    const records = !options.dryRun && options.records !== false
    const choice = storeChoice(ctx)
    const key = yield* sessionKey(ctx, records)
    const state = yield* (records ? loadForWriting(ctx, key) : loadForReading(ctx, key)).pipe(Effect.provide(choice.layer))
    yield* warn(state.warnings)
    const engine = yield* makeEngine({ ctx, aliases: state.record.aliases, store: records ? choice.layer : readOnlyCopy(state), dryRun: options.dryRun, promptPack: options.promptPack ?? SESSION_PROMPT_PACK })
    return { ctx, state, engine, records } satisfies Prepared
  })

/**
 * What the repository commands share: loading the session (a broken file is a warning,
 * never fatal), building the engine, and printing warnings on stderr.
 */
import { Effect } from "effect"
import type { ConfigOverrides } from "../config.ts"
import { commandContext, type CommandContext } from "../context.ts"
import { makeEngine, type Engine } from "../engine.ts"
import { firstTimeWarning, Output } from "../output.ts"
import { loadSession, type SessionFile } from "../session.ts"

export interface Prepared {
  readonly ctx: CommandContext
  readonly session: SessionFile
  readonly engine: Engine
}

/** Print warnings on stderr, one line each. */
export const warn = (warnings: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const output = yield* Output
    for (const w of warnings) if (firstTimeWarning(w)) yield* output.err(output.errStyle.yellow(`warning: ${w}`))
  })

/** Resolve the repository and configuration, load the session and build the engine. */
export const prepare = (overrides: ConfigOverrides, options: { readonly dryRun: boolean }) =>
  Effect.gen(function* () {
    const ctx = yield* commandContext(overrides)
    const loaded = yield* loadSession(ctx.root)
    if (loaded.warning !== undefined) yield* warn([loaded.warning])
    const engine = yield* makeEngine({ ctx, session: loaded.session, dryRun: options.dryRun })
    return { ctx, session: loaded.session, engine } satisfies Prepared
  })

/**
 * The work of `strata replay`: check the flags, run the replay with a progress line,
 * stream the `--dump` file, write the `--plot`, and print the table (or JSON).
 */
import { open, writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { PROVIDER_IDS } from "@strata/providers"
import { Effect, Option, Schema } from "effect"
import type { LayoutMode } from "@strata/core/effect"
import { DEFAULT_MODELS, modelServedBy } from "../config.ts"
import { resolveRepo } from "../context.ts"
import { ModelNotServed, UsageError } from "../errors.ts"
import { JsonFlag, RepoFlag } from "../flags.ts"
import { jsonDocument, Output } from "../output.ts"
import { runReplay, type ReplayReport } from "./replay.ts"
import { formatReport, plotSvg } from "./report.ts"
import type { ReplayProvider, StrategyName } from "./strategies.ts"

/** A replay could not run: not a git repository, an unknown revision, an unwritable file. */
export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  reason: Schema.String,
  hint: Schema.String
}) {
  override get message(): string {
    return `Replay failed: ${this.reason}`
  }
}

export interface ReplayFlags {
  readonly from: Option.Option<string>
  readonly turns: Option.Option<number>
  readonly provider: ReplayProvider
  readonly model: Option.Option<string>
  readonly gapSeconds: number
  readonly strategy: StrategyName | "all"
  readonly layout: LayoutMode
  readonly dump: Option.Option<string>
  readonly plot: Option.Option<string>
}

const firstLine = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.split("\n").find((l) => l.trim() !== "")?.trim() ?? text
}

const hintFor = (reason: string): string =>
  /not a git repository/i.test(reason)
    ? "pass --repo PATH naming a git repository"
    : /not on the first-parent line|unknown revision/i.test(reason)
      ? "--from takes a commit on the first-parent history of HEAD (git log --first-parent lists them)"
      : "run again with --verbose for the full cause"

export const runReplayCommand = (flags: ReplayFlags) =>
  Effect.gen(function* () {
    const output = yield* Output
    const json = yield* JsonFlag
    const root = yield* resolveRepo(Option.getOrUndefined(yield* RepoFlag))
    const turns = Option.getOrUndefined(flags.turns)
    if (turns !== undefined && turns <= 0) return yield* new UsageError({ reason: `--turns must be a positive number, got ${turns}` })
    if (!(flags.gapSeconds >= 0)) return yield* new UsageError({ reason: `--gap-seconds must be zero or more, got ${flags.gapSeconds}` })
    const model = Option.getOrUndefined(flags.model)
    if (model !== undefined && !modelServedBy(flags.provider, model)) {
      return yield* new ModelNotServed({ provider: flags.provider, model, servedBy: PROVIDER_IDS.filter((p) => modelServedBy(p, model)), setIn: "--model", defaultModel: DEFAULT_MODELS[flags.provider] })
    }
    const dumpPath = Option.getOrUndefined(flags.dump)
    const plotPath = Option.getOrUndefined(flags.plot)
    const progress = yield* output.progress("Replaying")
    const report: ReplayReport = yield* Effect.tryPromise({
      try: async () => {
        const dump = dumpPath === undefined ? undefined : await open(resolve(dumpPath), "w")
        try {
          return await runReplay({
            repo: root,
            from: Option.getOrUndefined(flags.from),
            turns,
            provider: flags.provider,
            model,
            gapSeconds: flags.gapSeconds,
            strategies: flags.strategy === "all" ? undefined : [flags.strategy],
            layout: flags.layout,
            onRequest: dump === undefined ? undefined : async (line) => {
              await dump.write(line + "\n")
            },
            onTurn: (done, total) => Effect.runPromise(progress.update(done, total))
          })
        } finally {
          await dump?.close()
        }
      },
      catch: (error) => {
        const reason = firstLine(error)
        return new ReplayError({ reason, hint: hintFor(reason) })
      }
    }).pipe(Effect.ensuring(progress.finish()))
    if (plotPath !== undefined) {
      yield* Effect.tryPromise({
        try: () => writeFile(resolve(plotPath), plotSvg(report)),
        catch: (error) => new ReplayError({ reason: `cannot write ${plotPath}: ${firstLine(error)}`, hint: "check that the folder exists and is writable" })
      })
    }
    if (json) {
      yield* output.out(jsonDocument(report, 2))
      return
    }
    yield* output.out(formatReport(report))
    const notes = [dumpPath === undefined ? undefined : `requests: ${dumpPath}`, plotPath === undefined ? undefined : `plot: ${plotPath}`].filter((n) => n !== undefined)
    if (notes.length > 0) yield* output.err(output.errStyle.dim(notes.join("; ")))
  })

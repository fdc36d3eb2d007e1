/**
 * The work of `strata replay`: check the flags, run `@strata/replay`'s `replay` with a
 * progress line, write the `--plot` and the `--html` page, and print the table (or JSON).
 */
import { writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { PROVIDER_IDS } from "@strata/providers"
import { formatReport, plotSvg, replay, sessionKindOf, strategiesOf, type ReplayProvider, type ReplayReport, type StrategyName } from "@strata/replay"
import { Effect, Option, Schema } from "effect"
import type { LayoutMode } from "@strata/core/effect"
import { DEFAULT_MODELS, modelServedBy } from "../support/config.ts"
import { resolveRepo } from "../support/context.ts"
import { ModelNotServed, UsageError } from "../support/errors.ts"
import { JsonFlag, RepoFlag } from "../support/flags.ts"
import { jsonDocument, Output } from "../support/output.ts"

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
  readonly session: Option.Option<"chat" | "agent">
  readonly transcript: Option.Option<string>
  readonly gapSeconds: number
  readonly stepSeconds: number
  readonly strategy: StrategyName | "all"
  readonly layout: LayoutMode
  readonly dump: Option.Option<string>
  readonly plot: Option.Option<string>
  readonly html: Option.Option<string>
  readonly open: boolean
}

const firstLine = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.split("\n").find((l) => l.trim() !== "")?.trim() ?? text
}

const BAD_REVISION = /not on the first-parent line|unknown revision/i

const hintFor = (reason: string): string =>
  /not a git repository/i.test(reason)
    ? "pass --repo PATH naming a git repository"
    : BAD_REVISION.test(reason)
      ? "--from takes a commit on the first-parent history of HEAD (git log --first-parent lists them)"
      : /ENOENT|holds no request/i.test(reason)
        ? "--transcript takes a file with one request body per line (docs/replay.md, Recorded sessions)"
        : "run again with --verbose for the full cause"

export const runReplayCommand = (flags: ReplayFlags) =>
  Effect.gen(function* () {
    const output = yield* Output
    const json = yield* JsonFlag
    const repoFlag = Option.getOrUndefined(yield* RepoFlag)
    const transcript = Option.getOrUndefined(flags.transcript)
    const session = Option.getOrUndefined(flags.session)
    // A recorded session needs no repository; --repo, when given, supplies its symbol map.
    const root = transcript === undefined || repoFlag !== undefined ? yield* resolveRepo(repoFlag) : undefined
    const turns = Option.getOrUndefined(flags.turns)
    if (transcript !== undefined && session !== undefined) return yield* new UsageError({ reason: "--transcript replays a recorded session; --session applies to git histories only" })
    if (transcript !== undefined && (Option.isSome(flags.from) || turns !== undefined)) return yield* new UsageError({ reason: "--from and --turns select commits of a git history; a recorded session (--transcript) is replayed whole" })
    if (turns !== undefined && turns <= 0) return yield* new UsageError({ reason: `--turns must be a positive number, got ${turns}` })
    if (!(flags.gapSeconds >= 0)) return yield* new UsageError({ reason: `--gap-seconds must be zero or more, got ${flags.gapSeconds}` })
    if (!(flags.stepSeconds >= 0)) return yield* new UsageError({ reason: `--step-seconds must be zero or more, got ${flags.stepSeconds}` })
    const kind = sessionKindOf({ session, transcript })
    if (flags.strategy !== "all" && !strategiesOf(kind).includes(flags.strategy)) {
      return yield* new UsageError({ reason: `--strategy ${flags.strategy} is not a strategy of ${kind === "chat" ? "chat replays (it is an agent strategy: add --session agent)" : "agent sessions (it is a chat strategy)"}` })
    }
    const flagModel = Option.getOrUndefined(flags.model)
    if (flagModel !== undefined && !modelServedBy(flags.provider, flagModel)) {
      return yield* new ModelNotServed({ provider: flags.provider, model: flagModel, servedBy: PROVIDER_IDS.filter((p) => modelServedBy(p, flagModel)), setIn: "--model", defaultModel: DEFAULT_MODELS[flags.provider] })
    }
    const dumpPath = Option.getOrUndefined(flags.dump)
    const plotPath = Option.getOrUndefined(flags.plot)
    const progress = yield* output.progress(kind === "recorded" ? "Replaying requests" : kind === "agent" ? "Replaying tasks" : "Replaying")
    const report: ReplayReport = yield* Effect.tryPromise({
      try: () =>
        replay({
          session,
          transcript,
          repo: root,
          from: Option.getOrUndefined(flags.from),
          turns,
          provider: flags.provider,
          model: flagModel ?? DEFAULT_MODELS[flags.provider],
          strategy: flags.strategy === "all" ? undefined : flags.strategy,
          layout: flags.layout,
          gapSeconds: flags.gapSeconds,
          stepSeconds: flags.stepSeconds,
          dump: dumpPath,
          onProgress: (done, total) => Effect.runPromise(progress.update(done, total))
        }),
      catch: (error): ReplayError | UsageError => {
        const reason = firstLine(error)
        // A revision --from names that the history does not have is a wrong command line.
        return BAD_REVISION.test(reason) ? new UsageError({ reason: `--from: ${reason}`, hint: hintFor(reason) }) : new ReplayError({ reason, hint: hintFor(reason) })
      }
    }).pipe(Effect.ensuring(progress.finish()))
    if (plotPath !== undefined) {
      yield* Effect.tryPromise({
        try: () => writeFile(resolve(plotPath), plotSvg(report)),
        catch: (error) => new ReplayError({ reason: `cannot write ${plotPath}: ${firstLine(error)}`, hint: "check that the folder exists and is writable" })
      })
    }
    const htmlPath = Option.getOrUndefined(flags.html)
    if (htmlPath !== undefined) {
      const { openInBrowser, renderReplayHtml } = yield* Effect.promise(() => import("@strata/ui"))
      yield* Effect.tryPromise({
        try: () => writeFile(resolve(htmlPath), renderReplayHtml(report)),
        catch: (error) => new ReplayError({ reason: `cannot write ${htmlPath}: ${firstLine(error)}`, hint: "check that the folder exists and is writable" })
      })
      if (flags.open) openInBrowser(pathToFileURL(resolve(htmlPath)).href)
    }
    if (json) {
      yield* output.out(jsonDocument(report, 2))
      return
    }
    yield* output.out(formatReport(report))
    const notes = [dumpPath === undefined ? undefined : `requests: ${dumpPath}`, plotPath === undefined ? undefined : `plot: ${plotPath}`, htmlPath === undefined ? undefined : `page: ${htmlPath}`].filter((n) => n !== undefined)
    if (notes.length > 0) yield* output.err(output.errStyle.dim(notes.join("; ")))
  })

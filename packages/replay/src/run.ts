/**
 * `replay`: the one entry point `strata replay` calls. It picks the session kind (a
 * chat per commit, an agent's task per commit, or a recorded session), checks the
 * strategy against it, streams every request to a dump file when asked, and returns
 * the report.
 */
import { open } from "node:fs/promises"
import { resolve } from "node:path"
import type { LayoutMode } from "@strata/core/effect"
import { runAgentReplay, runRecordedReplay } from "./agentReplay.ts"
import { runReplay, type ReplayReport, type SessionKind } from "./replay.ts"
import { strategiesOf, type ReplayProvider, type StrategyName } from "./strategies.ts"
import { recentStart } from "./internal/git.ts"

export interface ReplayRunOptions {
  /** `chat` (default) or `agent`, for a git history; ignored with `transcript`. */
  readonly session?: "chat" | "agent" | undefined
  /** A recorded session (one request body per line) instead of a git history. */
  readonly transcript?: string | undefined
  /** The repository replayed; with `transcript`, the one that supplies the symbol map (optional). */
  readonly repo?: string | undefined
  /**
   * Start revision; each later first-parent commit is a turn (task). Default: recent
   * history, `turns` commits before HEAD, so `turns: 5` replays the last five commits
   * (without `turns`, the whole history from the root commit).
   */
  readonly from?: string | undefined
  /** Most turns (chat) or tasks (agent). */
  readonly turns?: number | undefined
  readonly provider?: ReplayProvider | undefined
  readonly model?: string | undefined
  /** One strategy (with `none` and `oracle`, for the ratios); default all of the session kind's. */
  readonly strategy?: StrategyName | undefined
  readonly layout?: LayoutMode | undefined
  readonly gapSeconds?: number | undefined
  readonly stepSeconds?: number | undefined
  /** Write every request as one JSON line (`{"t","strategy","request"}`) to this file. */
  readonly dump?: string | undefined
  /** Called as turns, tasks or requests are done. */
  readonly onProgress?: ((done: number, total: number) => void | Promise<void>) | undefined
}

/** The session kind a run replays. Pure. */
export const sessionKindOf = (options: Pick<ReplayRunOptions, "session" | "transcript">): SessionKind =>
  options.transcript !== undefined ? "recorded" : (options.session ?? "chat")

/**
 * Run one replay: a git history as a chat or an agent session (by default its last
 * `turns` commits), or a recorded session. Throws an `Error` whose message says what was wrong (an unknown revision, a strategy
 * of the other session kind, an unreadable file).
 *
 * @example
 * ```ts no-run
 * import { formatReport, replay } from "@strata/replay"
 * const report = await replay({ repo: "examples/demo-repo", session: "agent", turns: 5 })
 * console.log(formatReport(report))
 * ```
 */
export const replay = async (options: ReplayRunOptions): Promise<ReplayReport> => {
  const kind = sessionKindOf(options)
  const available: ReadonlyArray<StrategyName> = strategiesOf(kind)
  if (options.strategy !== undefined && !available.includes(options.strategy)) {
    throw new Error(`--strategy ${options.strategy} is not a strategy of ${kind === "chat" ? "chat replays (it is an agent strategy: add --session agent)" : "agent sessions (it is a chat strategy)"}`)
  }
  const dump = options.dump === undefined ? undefined : await open(resolve(options.dump), "w")
  const onRequest = dump === undefined ? undefined : async (line: string) => {
    await dump.write(line + "\n")
  }
  const common = { provider: options.provider, model: options.model, strategies: options.strategy === undefined ? undefined : [options.strategy], layout: options.layout, onRequest }
  try {
    if (options.transcript !== undefined) {
      return await runRecordedReplay({ ...common, transcript: { path: resolve(options.transcript) }, repo: options.repo, stepSeconds: options.stepSeconds, onProgress: options.onProgress })
    }
    if (options.repo === undefined) throw new Error("no repository to replay")
    const from = options.from ?? (options.turns === undefined ? undefined : await recentStart(options.repo, options.turns))
    if (kind === "agent") {
      return await runAgentReplay({ ...common, repo: options.repo, from, tasks: options.turns, gapSeconds: options.gapSeconds, stepSeconds: options.stepSeconds, onProgress: options.onProgress })
    }
    return await runReplay({ ...common, repo: options.repo, from, turns: options.turns, gapSeconds: options.gapSeconds, onTurn: options.onProgress })
  } finally {
    await dump?.close()
  }
}

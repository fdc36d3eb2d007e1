// Types for bench/replay/sessions.mjs, so the TypeScript tests can import it.

/** The replay API the generators use: `@strata/replay`'s (built, or its sources). */
export interface SessionLib {
  readonly runAgentReplay: (options: {
    readonly repo: string
    readonly from?: string | undefined
    readonly tasks?: number | undefined
    readonly gapSeconds?: number | undefined
    readonly stepSeconds?: number | undefined
    readonly provider?: "anthropic"
    readonly model?: string
    readonly strategies?: ReadonlyArray<"transcript">
    readonly onRequest?: (line: string) => void
  }) => Promise<unknown>
  readonly AGENT_TOOLS: ReadonlyArray<{ readonly name: string; readonly description?: string; readonly inputSchema: object }>
}

/** A recorded session: its name and its JSONL text (one Anthropic Messages body per line, with `t`). */
export interface RecordedSessionFile {
  readonly name: string
  readonly text: string
}

/** The `transcript` strategy's request bodies of an agent replay, one line each, with `t`. */
export declare function agentTranscript(
  lib: Pick<SessionLib, "runAgentReplay">,
  options: { readonly repo: string; readonly tasks?: number; readonly gapSeconds?: number; readonly stepSeconds?: number; readonly from?: string }
): Promise<string>

/** An agent whose conversation piles up superseded reads and test logs on the same few files of `repo`. */
export declare function supersededSession(
  lib: Pick<SessionLib, "AGENT_TOOLS">,
  options: {
    readonly repo: string
    readonly files: ReadonlyArray<string>
    readonly tasks?: number
    readonly logLines?: number
    readonly stepSeconds?: number
    readonly gapSeconds?: number
  }
): string

/** The recorded sessions the replay benchmark reports, from the demo repository. */
export declare function recordedSessions(lib: SessionLib, options: { readonly demo: string; readonly tasks?: number }): Promise<ReadonlyArray<RecordedSessionFile>>

/** An agent that reads many files in one step (more blocks than a breakpoint looks back), then edits, tests and answers. */
export declare function parallelReadsSession(
  lib: Pick<SessionLib, "AGENT_TOOLS">,
  options: { readonly repo: string; readonly files: ReadonlyArray<string>; readonly tasks?: number; readonly stepSeconds?: number; readonly gapSeconds?: number }
): string

/**
 * `strata replay`: replay a repository's git history as a coding session under every
 * caching strategy and print what each would cost. The lab is `@strata/replay`; the
 * command's work lives in `run/replay.ts`, loaded only when the command runs.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { LAYOUT_MODES } from "@strata/core/effect"
// The names only: `@strata/replay` itself (the simulators, the proxy's transform, the
// symbol map's parsers) loads when the command runs, not with every `strata` start.
import { AGENT_STRATEGIES, CHAT_STRATEGIES, REPLAY_PROVIDERS, STRATEGIES } from "@strata/replay/names"

/** What `--session` takes. */
export const SESSION_KINDS = ["chat", "agent"] as const

export const replayCommand = Command.make(
  "replay",
  {
    from: Flag.String("from").pipe(
      Flag.withMetavar("REV"),
      Flag.withDescription("Start at this revision; every later first-parent commit is one turn (default: recent history, N commits before HEAD with --turns N, so --turns 5 replays the last five commits; without --turns, the root commit)"),
      Flag.optional
    ),
    turns: Flag.Int("turns").pipe(Flag.withMetavar("N"), Flag.withDescription("Replay at most N turns, or N tasks with --session agent (default: all)"), Flag.optional),
    provider: Flag.Literals("provider", REPLAY_PROVIDERS).pipe(
      Flag.withDescription(`Provider whose request format and prompt cache are simulated: ${REPLAY_PROVIDERS.join(", ")}`),
      Flag.withDefault("anthropic" as const)
    ),
    model: Flag.String("model").pipe(Flag.withDescription("Model id (default: the provider's default model)"), Flag.optional),
    session: Flag.Literals("session", SESSION_KINDS).pipe(
      Flag.withDescription("chat (default): each commit one chat turn; agent: each commit one task of a coding agent, one request per tool step"),
      Flag.optional
    ),
    transcript: Flag.String("transcript").pipe(
      Flag.withMetavar("FILE.jsonl"),
      Flag.withDescription("Replay a recorded session instead of a git history: one Anthropic Messages or OpenAI Chat request body per line, optional \"t\" seconds (--repo, when given, supplies the symbol map)"),
      Flag.optional
    ),
    gapSeconds: Flag.Finite("gap-seconds").pipe(
      Flag.withMetavar("S"),
      Flag.withDescription("Seconds between turns (chat) or between an agent's tasks, so cache lifetimes matter (default 90)"),
      Flag.withDefault(90)
    ),
    stepSeconds: Flag.Finite("step-seconds").pipe(
      Flag.withMetavar("S"),
      Flag.withDescription("Seconds between an agent's requests within a task (default 6); a recorded line without \"t\" comes this long after the previous"),
      Flag.withDefault(6)
    ),
    strategy: Flag.Literals("strategy", ["all", ...STRATEGIES] as const).pipe(
      Flag.withDescription(`Strategy to run, or all (none and oracle always run, for the ratios). Chat: ${CHAT_STRATEGIES.join(", ")}. Agent and recorded sessions: ${AGENT_STRATEGIES.join(", ")} (middleware on anthropic and bedrock)`),
      Flag.withDefault("all" as const)
    ),
    layout: Flag.Literals("layout", LAYOUT_MODES).pipe(
      Flag.withDescription("Request layout of the strata-<policy> strategies: journal (the default) or seed (the tiered layout, docs/pipeline.md; strata-seed always uses it)"),
      Flag.withDefault("journal" as const)
    ),
    dump: Flag.String("dump").pipe(
      Flag.withMetavar("FILE.jsonl"),
      Flag.withDescription('Write every request as one JSON line {"t": seconds, "strategy": name, "request": <native body>}'),
      Flag.optional
    ),
    plot: Flag.String("plot").pipe(Flag.withMetavar("FILE.svg"), Flag.withDescription("Write an SVG chart of each strategy's cumulative and per-turn input cost"), Flag.optional),
    html: Flag.String("html").pipe(Flag.withMetavar("FILE.html"), Flag.withDescription("Write the report as one self-contained page (works offline): cumulative and per-turn cost per strategy on a log scale and against the cheapest, the read/write/uncached split, the price table"), Flag.optional),
    open: Flag.Boolean("open").pipe(Flag.withDescription("Open the --html page in the system's browser"), Flag.withDefault(false))
  },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/replay.ts")), (m) => m.runReplayCommand(flags))
).pipe(
  Command.withDescription(
    "Replay the repository's git history as a coding session (chat: each commit one turn, the files it touches selected, its message the prompt; agent: each commit one task of a coding agent that searches, reads the touched files, edits, runs the tests and answers, one request per step), or a recorded session (--transcript), under each caching strategy; score every request with the provider's prompt-cache simulator, and print requests, input tokens, cache reads, writes and uncached tokens, hit rate and cost per strategy, relative to no caching, to the oracle (the content bound: the least any cache charges for the session's content; strategies that send less content, such as symbol diffs or cleared tool results, can go under it) and to the bound over each strategy's own requests, with superseded and cleared tokens. Nothing is checked out and nothing under .strata/ is written."
  ),
  Command.withShortDescription("Measure cache hit rate and cost on a git history, per strategy"),
  Command.withExamples([
    { command: "strata replay --turns 20", description: "The last 20 commits of this repository, every strategy" },
    { command: "strata replay --repo examples/demo-repo --provider openai --plot replay.svg", description: "The demo repository on OpenAI, with a plot" },
    { command: "strata replay --session agent --html replay.html --open", description: "An agent session as one page with charts, opened in the browser" },
    { command: "strata replay --strategy strata-gated --dump requests.jsonl --json", description: "One strategy, every native request body saved for re-scoring" },
    { command: "strata replay --session agent --turns 20", description: "The last 20 commits as a coding agent's tasks, with tool calls" },
    { command: "strata replay --from v1.0 --turns 20", description: "The 20 commits after the tag v1.0" },
    { command: "strata replay --transcript session.jsonl --repo .", description: "A recorded session (request bodies a logging proxy wrote), with this repository's symbol map" }
  ])
)

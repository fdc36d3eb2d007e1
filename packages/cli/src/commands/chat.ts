/**
 * `strata chat`: an interactive loop (or one turn with `--once`) that assembles each
 * request through the pipeline, sends it to the provider when its API key is set,
 * streams the reply, runs the read-only repository tools the model calls (`--no-tools`
 * turns them off), and shows the provider's cache read/write and the HUD per turn.
 * `--dry-run` shows each request without sending it (no key needed, nothing saved).
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { dryRunFlag, modelFlag, policyFlag, providerFlag } from "../support/flags.ts"

export const chat = Command.make(
  "chat",
  {
    once: Flag.String("once").pipe(Flag.withDescription("Send this one prompt, print the reply and exit (no interactive loop)"), Flag.optional),
    file: Flag.String("file").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("A file to put in context (repeat for more; default: the session's selection). In the loop: /add PATH, /drop PATH"),
      Flag.atLeast(0)
    ),
    provider: providerFlag,
    model: modelFlag,
    policy: policyFlag,
    dryRun: dryRunFlag,
    timeoutMs: Flag.Int("timeout-ms").pipe(
      Flag.withDescription("How long to wait for the provider to start answering, and between stream events, in ms (default: timeoutMs in .strata/config.json, $STRATA_TIMEOUT_MS, or 60000)"),
      Flag.optional
    ),
    hud: Flag.Boolean("no-hud").pipe(Flag.withDescription("Do not print the HUD after each turn"), Flag.withDefault(false)),
    noTools: Flag.Boolean("no-tools").pipe(
      Flag.withDescription("Offer the model no tools (by default it may read files, search and list the repository, read-only, inside the repository)"),
      Flag.withDefault(false)
    ),
    session: Flag.String("session").pipe(
      Flag.withMetavar("NAME"),
      Flag.withDescription("The session to continue or start (default: session in .strata/config.json, $STRATA_SESSION, or cli)"),
      Flag.optional
    ),
    continue: Flag.Boolean("continue").pipe(
      Flag.withAlias("c"),
      Flag.withDescription("Continue the session the last chat in this repository used (its --session), with its history"),
      Flag.withDefault(false)
    ),
    allowIgnored: Flag.Boolean("allow-ignored").pipe(
      Flag.withDescription(
        "Let the tools read files the repository's .gitignore excludes and secret files (.env*, *.pem, *.key, id_*, .npmrc, .netrc); by default they are refused so they never reach the provider (config: allowIgnored)"
      ),
      Flag.withDefault(false)
    ),
    maxToolRounds: Flag.Int("max-tool-rounds").pipe(
      Flag.withMetavar("N"),
      Flag.withDescription("Rounds of tool calls one prompt may run before the model must answer (default 8)"),
      Flag.optional
    )
  },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/chat.ts")), (m) => m.runChat({ ...flags, noHud: flags.hud }))
).pipe(
  Command.withDescription(
    "Chat about the repository. Each turn is assembled by the pipeline and sent to the provider (ANTHROPIC_API_KEY, OPENAI_API_KEY or AWS credentials; STRATA_BASE_URL for a gateway); the reply streams to stdout, then the provider's cache read/write and the HUD. The model may call read-only tools (read_file, search, list_files) that run inside the repository; each call is shown, and the loop sends their results back until the model answers (--max-tool-rounds, --no-tools). History is kept in the session store (.strata/state/ by default; --session NAME picks the session) and compacted when it passes budgets.compactionTokens. Without a key, --dry-run shows every request instead of sending it."
  ),
  Command.withShortDescription("Chat with real requests (or --dry-run), with the HUD per turn"),
  Command.withExamples([
    { command: "strata chat --file src/services/pricing.ts", description: "Interactive; type /help for the commands" },
    { command: "strata chat --once 'Where is pricing done?'", description: "One turn, then exit" },
    { command: "strata chat --dry-run --once 'Explain the worker'", description: "No API key needed: the request and its HUD, nothing sent" },
    { command: "strata chat --no-tools --once 'Summarize the README'", description: "One request, no tool calls" },
    { command: "strata chat --continue", description: "Pick up the last chat's session (after `strata chat --session review`, that is review)" },
    { command: "STRATA_BASE_URL=http://localhost:4000/v1 strata chat --provider openai-compatible", description: "Through a LiteLLM or OpenRouter gateway (the base URL ends in /v1)" }
  ])
)

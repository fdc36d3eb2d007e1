/**
 * The replay's strategies: how each one lays out the same turn as a provider request.
 * Chat mode's four baselines (`none`, `trailing`, `transcript`, `segments`), Strata's
 * pipeline under each promotion policy (`strata-*`, the layers the CLI uses) and the
 * `oracle` layout the lower bound is scored on. Every strategy returns the provider's
 * native body. Agent mode's strategies (`agentStrategies.ts`) share the names and
 * these helpers.
 */
import { Clock, Effect, Layer, ManagedRuntime } from "effect"
import {
  ACK,
  assemble,
  DEFAULT_COMPACTION_CONFIG,
  FILE_TREE_HEADER,
  FILES_ACTIVE_HEADER,
  formatFile,
  LayoutMode,
  formatFiles,
  Pipeline,
  REPO_MAP_CONTINUATION,
  REPO_MAP_HEADER,
  SymbolIndex,
  Tokenizer,
  Tracker,
  withReminder,
  type AssemblyInput,
  type AssemblyResult,
  type Block,
  type Breakpoint,
  type CachedTier,
  type FileContent,
  type HistoryCompactor,
  type Message,
  type NeutralRequest,
  type SymbolMapSnapshot,
  type TokenCounter
} from "@strata/core/effect"
import { placementLayerFor, placeWith } from "@strata/providers"
import { DEFAULT_POLICY, TrackerLayer, type PolicyName } from "@strata/tiers"

/** Every strategy of either session kind, in the order tables list them. */
export const STRATEGIES = [
  "none",
  "trailing",
  "transcript",
  "transcript-clear",
  "middleware",
  "segments",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const
export type StrategyName = (typeof STRATEGIES)[number]

/** The strategies of a chat replay (`--session chat`), in table order. */
export const CHAT_STRATEGIES = [
  "none",
  "trailing",
  "transcript",
  "segments",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const satisfies ReadonlyArray<StrategyName>
export type ChatStrategyName = (typeof CHAT_STRATEGIES)[number]

/** The strategies of an agent replay (`--session agent`, `--transcript`), in table order. */
export const AGENT_STRATEGIES = [
  "none",
  "transcript",
  "transcript-clear",
  "middleware",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const satisfies ReadonlyArray<StrategyName>
export type AgentStrategyName = (typeof AGENT_STRATEGIES)[number]

/** The strategies of a session kind, in table order: chat's, or agent mode's (agent and recorded sessions). Pure. */
export const strategiesOf = (kind: "chat" | "agent" | "recorded"): ReadonlyArray<StrategyName> => (kind === "chat" ? CHAT_STRATEGIES : AGENT_STRATEGIES)

/** Providers the replay scores (one placement plugin and one simulator each). */
export const REPLAY_PROVIDERS = ["anthropic", "bedrock", "openai", "gemini"] as const
export type ReplayProvider = (typeof REPLAY_PROVIDERS)[number]

/** The model a replay prices when none is given: the CLI's default model per provider. */
export const DEFAULT_REPLAY_MODELS: Readonly<Record<ReplayProvider, string>> = {
  anthropic: "claude-sonnet-5",
  bedrock: "anthropic.claude-sonnet-5-v1:0",
  openai: "gpt-5.4",
  gemini: "gemini-2.5-flash"
}

/** History tokens at which a replayed conversation is compacted when no trigger is given (core's default, as the CLI's). */
export const DEFAULT_COMPACTION_TOKENS = DEFAULT_COMPACTION_CONFIG.triggerTokens

/** What one turn gives every strategy: the same files, history, map and prompt. */
export interface TurnInput {
  readonly index: number
  /** Seconds since the session started. */
  readonly t: number
  readonly prompt: string
  readonly reply: string
  /** Selected files with their content before the commit, sorted by path. */
  readonly files: ReadonlyArray<FileContent>
  /** Conversation so far (compacted like a live session's). */
  readonly history: ReadonlyArray<Message>
  /** True when `history` was compacted just before this turn. */
  readonly historyCompacted: boolean
  /** The symbol map of the repository before the commit. */
  readonly map: SymbolMapSnapshot
}

/** What does not change during a session. */
export interface SessionEnv {
  readonly provider: ReplayProvider
  readonly model: string
  readonly systemPrompt: string
  readonly systemReminder: string
  readonly counter: TokenCounter
  /** Tracker setting for the Strata strategies (the provider minimum, say; 0 turns anchoring off). */
  readonly cacheTargetTokens: number
  /** Layout of the `strata-<policy>` strategies. */
  readonly layout: LayoutMode
  /** Compacts the transcript strategy's conversation once it passes its window. */
  readonly transcriptCompactor: HistoryCompactor["Service"]
}

/**
 * What a strategy reports about one request beside its body (0 when it does not know).
 * Recorded in the dump, so re-scoring reproduces them.
 */
export interface StrategyCounts {
  /**
   * Tokens of superseded copies the request still carries: an earlier copy of an item (a
   * file, a symbol block, the file tree) that a newer copy later in the request replaced.
   */
  readonly supersededTokens?: number | undefined
  /** Tokens context editing cleared from the request (old tool results dropped); 0 without context editing. */
  readonly clearedTokens?: number | undefined
}

/** One request of a strategy: the provider's native body and what the strategy counted. */
export interface StrategyRequest extends StrategyCounts {
  readonly body: unknown
}

/** One strategy's session. */
export interface Strategy {
  readonly name: StrategyName
  /** This turn's request. */
  readonly request: (turn: TurnInput) => Promise<StrategyRequest>
  /** The request was sent and answered: advance session state (tracker commit, transcript reply). */
  readonly answered: (turn: TurnInput) => Promise<void>
  readonly dispose: () => Promise<void>
  /** Strata strategies: the last request's tier report and where its breakpoints landed. */
  readonly inspect?: () => AssemblyResult | undefined
}

// ---------------------------------------------------------------------------------------
// Shared pieces

const tokensOf = (messages: ReadonlyArray<Message>, counter: TokenCounter): number =>
  messages.reduce((sum, m) => sum + counter.countMessage(m), 0)

/** A neutral request from blocks, with a breakpoint closing every non-empty cached block. */
export const requestOf = (
  model: string,
  blocks: ReadonlyArray<{ readonly tier: Block["tier"]; readonly messages: ReadonlyArray<Message> }>,
  counter: TokenCounter
): NeutralRequest => {
  const out: Array<Block> = []
  const messages: Array<Message> = []
  const breakpoints: Array<Breakpoint> = []
  for (const b of blocks) {
    if (b.messages.length === 0) continue
    messages.push(...b.messages)
    out.push({ tier: b.tier, messages: b.messages, items: [], tokens: tokensOf(b.messages, counter) })
    if (b.tier !== "active") breakpoints.push({ tier: b.tier, messageIndex: messages.length - 1 })
  }
  return { model, blocks: out, messages, breakpoints }
}

const place = (env: SessionEnv, request: NeutralRequest): unknown => placeWith(env.provider, request).body

/** The map's blocks of files not in context, in path order (what flat assembly shows). */
export const mapBlocks = (map: SymbolMapSnapshot, selected: ReadonlySet<string>): ReadonlyArray<string> =>
  [...blocksOf(map)].flatMap(([path, block]) => (selected.has(path) ? [] : [block]))

/** Every file's symbol block without its final newline, by path (files with an empty block left out), in map order. */
export const blocksOf = (map: SymbolMapSnapshot): Map<string, string> => {
  const out = new Map<string, string>()
  for (const path of map.symbolFiles) {
    const block = map.block(path)?.replace(/\n$/, "")
    if (block !== undefined && block !== "") out.set(path, block)
  }
  return out
}

/** The symbol map as flat assembly shows it: header, legend, the blocks of files not in context. */
export const mapText = (map: SymbolMapSnapshot, selected: ReadonlySet<string>): string =>
  REPO_MAP_HEADER + [map.legend.trimEnd(), ...mapBlocks(map, selected)].filter((s) => s.trim() !== "").join("\n\n")

const promptMessage = (env: SessionEnv, turn: TurnInput): Message => ({ role: "user", content: withReminder(turn.prompt, env.systemReminder) })

const selectedPaths = (turn: TurnInput): ReadonlySet<string> => new Set(turn.files.map((f) => f.path))

const assemblyInput = (env: SessionEnv, turn: TurnInput): AssemblyInput => ({
  model: env.model,
  prompt: turn.prompt,
  systemPrompt: env.systemPrompt,
  systemReminder: env.systemReminder,
  files: turn.files,
  history: turn.history
})

/** The pipeline's layers as the CLI composes them, over the turn's symbol map (no tracker: flat assembly). */
const pipelineLayer = (env: SessionEnv, map: () => SymbolMapSnapshot) =>
  Layer.mergeAll(
    Pipeline.layer,
    Tokenizer.layerFrom(env.counter),
    Layer.succeed(SymbolIndex, { snapshot: Effect.sync(map) }),
    placementLayerFor(env.provider)
  )

/** The symbol map of the turn being assembled, for a `SymbolIndex` layer built once per strategy. */
export const currentMap = () => {
  let map: SymbolMapSnapshot | undefined
  return {
    set: (m: SymbolMapSnapshot) => {
      map = m
    },
    get: (): SymbolMapSnapshot => {
      if (map === undefined) throw new Error("replay: no symbol map for this turn yet")
      return map
    }
  }
}

// ---------------------------------------------------------------------------------------
// Baselines

/**
 * `none` and `trailing`: the pipeline's flat layout (seed 002 `assemble_messages`: system
 * with the symbol map, file tree, Working Files, history, prompt). `none` has no
 * breakpoint; `trailing` has one, on the last message.
 */
const flatStrategy = (env: SessionEnv, name: "none" | "trailing"): Strategy => {
  const map = currentMap()
  const runtime = ManagedRuntime.make(pipelineLayer(env, map.get))
  return {
    name,
    request: async (turn) => {
      map.set(turn.map)
      const result = await runtime.runPromise(assemble(assemblyInput(env, turn)))
      if (name === "none") return { body: result.placed.body }
      const flat = result.request
      const tier: CachedTier = "L3"
      return {
        body: place(env, {
          ...flat,
          blocks: flat.blocks.map((b) => ({ ...b, tier })),
          breakpoints: [{ tier, messageIndex: flat.messages.length - 1 }]
        })
      }
    },
    answered: async () => {},
    dispose: () => runtime.dispose()
  }
}

/**
 * `segments`: Aider's fixed segments, in Aider's order (`chat_chunks.py`: system, repo
 * map, done messages, chat files, current message), each closed by a breakpoint:
 * system prompt | symbol map and file tree | history | Working Files | prompt.
 */
export const segmentsRequest = (env: SessionEnv, turn: TurnInput): NeutralRequest => {
  const selected = selectedPaths(turn)
  const files = formatFiles(turn.files, FILES_ACTIVE_HEADER)
  return requestOf(env.model, [
    { tier: "L0", messages: [{ role: "system", content: env.systemPrompt }] },
    {
      tier: "L1",
      messages: [
        { role: "user", content: `${mapText(turn.map, selected)}\n\n${FILE_TREE_HEADER}${turn.map.fileTree}` },
        { role: "assistant", content: ACK }
      ]
    },
    { tier: "L2", messages: turn.history },
    { tier: "L3", messages: files === "" ? [] : [{ role: "user", content: files }, { role: "assistant", content: ACK }] },
    { tier: "active", messages: [promptMessage(env, turn)] }
  ], env.counter)
}

const segmentsStrategy = (env: SessionEnv): Strategy => ({
  name: "segments",
  request: (turn) => Promise.resolve({ body: place(env, segmentsRequest(env, turn)) }),
  answered: async () => {},
  dispose: async () => {}
})

/**
 * `transcript`: an append-only conversation. The first request carries the system
 * prompt with the symbol map and the file tree as they were at the start. Every turn
 * then appends one user message (with an `Ok.` reply) holding what changed since it was
 * last shown: the symbol blocks of files that are new or changed (and the paths of
 * files gone), the file tree when it changed, and the selected files that are new or
 * changed; then the prompt. The reply is appended after. So the conversation carries
 * the same information as the other strategies, plus the superseded copies (counted as
 * `supersededTokens`). One breakpoint, on
 * the last message. When the conversation passes its window it is compacted (core's
 * `HistoryCompactor`) and everything since the start is shown afresh.
 */
const transcriptStrategy = (env: SessionEnv): Strategy => {
  let head: ReadonlyArray<Message> | undefined
  let start: { readonly blocks: ReadonlyMap<string, string>; readonly tree: string } | undefined
  let conversation: Array<Message> = []
  let shownFiles = new Map<string, string>()
  let shownBlocks = new Map<string, string>()
  let shownTree = ""
  // Superseded copies: a block or file shown again (changed) leaves its earlier copy in the conversation.
  let superseded = 0
  return {
    name: "transcript",
    request: async (turn) => {
      if (head === undefined || start === undefined) {
        head = [
          { role: "system", content: `${env.systemPrompt}\n\n${mapText(turn.map, new Set())}` },
          ...(turn.map.fileTree === "" ? [] : [{ role: "user" as const, content: FILE_TREE_HEADER + turn.map.fileTree }, { role: "assistant" as const, content: ACK }])
        ]
        start = { blocks: blocksOf(turn.map), tree: turn.map.fileTree }
        shownBlocks = new Map(start.blocks)
        shownTree = start.tree
      }
      const compacted = await Effect.runPromise(env.transcriptCompactor.compactHistoryIfNeeded(conversation))
      if (compacted.compacted) {
        conversation = [...compacted.history]
        shownFiles = new Map()
        shownBlocks = new Map(start.blocks)
        shownTree = start.tree
        superseded = 0
      }
      const selected = selectedPaths(turn)
      const blocks = blocksOf(turn.map)
      const changedBlocks = [...blocks].filter(([path, block]) => !selected.has(path) && shownBlocks.get(path) !== block)
      const present = new Set(turn.map.files)
      const gone = [...shownBlocks.keys()].filter((path) => !blocks.has(path) && !present.has(path))
      const changedFiles = turn.files.filter((f) => shownFiles.get(f.path) !== f.content)
      const sections = [
        changedBlocks.length + gone.length === 0
          ? ""
          : `${REPO_MAP_CONTINUATION}${[...changedBlocks.map(([, block]) => block), ...gone.map((path) => `${path}: (deleted)`)].join("\n\n")}`,
        turn.map.fileTree === shownTree ? "" : FILE_TREE_HEADER + turn.map.fileTree,
        formatFiles(changedFiles, FILES_ACTIVE_HEADER)
      ].filter((section) => section !== "")
      if (sections.length > 0) conversation.push({ role: "user", content: sections.join("\n\n") }, { role: "assistant", content: ACK })
      for (const [path, block] of changedBlocks) {
        const old = shownBlocks.get(path)
        if (old !== undefined) superseded += env.counter.count(old)
        shownBlocks.set(path, block)
      }
      for (const path of gone) shownBlocks.delete(path)
      if (turn.map.fileTree !== shownTree && shownTree !== "") superseded += env.counter.count(shownTree)
      shownTree = turn.map.fileTree
      for (const f of changedFiles) {
        const old = shownFiles.get(f.path)
        if (old !== undefined) superseded += env.counter.count(old)
        shownFiles.set(f.path, f.content)
      }
      conversation.push(promptMessage(env, turn))
      return {
        body: place(env, requestOf(env.model, [{ tier: "L3", messages: [...head, ...conversation] }], env.counter)),
        supersededTokens: superseded
      }
    },
    answered: (turn) => {
      conversation.push({ role: "assistant", content: turn.reply })
      return Promise.resolve()
    },
    dispose: async () => {}
  }
}

// ---------------------------------------------------------------------------------------
// Strata

/**
 * `strata-<policy>`: core's tiered pipeline with the `@strata/tiers` tracker under one
 * promotion policy, the turn's symbol map and the provider's placement plugin, in the
 * default journal layout. `strata-seed` is the same with the default policy in seed
 * 002's layout (every tier re-rendered from the tracker each request), for comparison.
 * The tracker update is committed once the request is answered, as in a live session,
 * and its history entries are purged when the history is compacted.
 */
const strataPolicyStrategy = (env: SessionEnv, name: StrategyName, policy: PolicyName, layout: LayoutMode): Strategy => {
  const map = currentMap()
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      pipelineLayer(env, map.get),
      TrackerLayer.memory({ config: { policy, cacheTargetTokens: env.cacheTargetTokens } }),
      Layer.succeed(LayoutMode, layout)
    )
  )
  let commit: Effect.Effect<void, unknown> | undefined
  let last: AssemblyResult | undefined
  return {
    name,
    inspect: () => last,
    request: async (turn) => {
      map.set(turn.map)
      if (turn.historyCompacted) await runtime.runPromise(Effect.gen(function* () {
        yield* (yield* Tracker).purgeHistory
      }))
      // The session's own time, so the pipeline sees the turns' gaps (cache expiry).
      const result = await runtime.runPromise(assemble(assemblyInput(env, turn)).pipe(Effect.provideService(Clock.Clock, clockAt(turn.t * 1000))))
      commit = result.commit
      last = result
      return { body: result.placed.body, supersededTokens: result.journal?.staleTokens ?? 0 }
    },
    answered: async () => {
      if (commit !== undefined) await runtime.runPromise(commit)
      commit = undefined
    },
    dispose: () => runtime.dispose()
  }
}

/** A clock stopped at `ms` (epoch milliseconds). */
export const clockAt = (ms: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => ms,
  currentTimeMillis: Effect.succeed(ms),
  currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  monotonicTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  sleep: () => Effect.void
})

// ---------------------------------------------------------------------------------------
// Oracle

/**
 * The oracle's layout: the turn's information (the same as the flat layout's) with
 * every item in its own text block: system prompt, map header and legend, each symbol
 * block, the file tree, each selected file, each history message, the prompt. It is
 * not scored by a cache simulator but by comparing blocks with the previous request's
 * (see `scoreOracle`): no real cache can do better on these items.
 */
export const oracleRequest = (env: SessionEnv, turn: TurnInput): NeutralRequest => {
  const selected = selectedPaths(turn)
  const text = (t: string) => ({ type: "text" as const, text: t })
  const context = [
    ...(turn.map.fileTree === "" ? [] : [text(FILE_TREE_HEADER + turn.map.fileTree)]),
    ...(turn.files.length === 0 ? [] : [text(FILES_ACTIVE_HEADER), ...turn.files.map((f) => text(formatFile(f.path, f.content)))])
  ]
  return requestOf(env.model, [
    {
      tier: "active",
      messages: [
        { role: "system", content: [text(env.systemPrompt), text(REPO_MAP_HEADER + turn.map.legend), ...mapBlocks(turn.map, selected).map(text)] },
        ...(context.length === 0 ? [] : [{ role: "user" as const, content: context }, { role: "assistant" as const, content: ACK }]),
        ...turn.history,
        promptMessage(env, turn)
      ]
    }
  ], env.counter)
}

const oracleStrategy = (env: SessionEnv): Strategy => ({
  name: "oracle",
  request: (turn) => Promise.resolve({ body: place(env, oracleRequest(env, turn)) }),
  answered: async () => {},
  dispose: async () => {}
})


/** Strata's strategies in both replays: a tracker policy in the session's layout, or seed 002's layout. */
export type StrataStrategyName = "strata-threshold" | "strata-gated" | "strata-flux" | "strata-seed"

/** The policy and layout a Strata strategy runs with. Pure. */
export const strataVariant = (name: StrataStrategyName, layout: LayoutMode): { readonly policy: PolicyName; readonly layout: LayoutMode } =>
  name === "strata-seed" ? { policy: DEFAULT_POLICY, layout: "seed" } : { policy: name === "strata-threshold" ? "threshold" : name === "strata-gated" ? "gated" : "flux", layout }

/** A session of one strategy. */
export const makeStrategy = (name: ChatStrategyName, env: SessionEnv): Strategy => {
  switch (name) {
    case "none":
    case "trailing":
      return flatStrategy(env, name)
    case "transcript":
      return transcriptStrategy(env)
    case "segments":
      return segmentsStrategy(env)
    case "strata-threshold":
    case "strata-gated":
    case "strata-flux":
    case "strata-seed": {
      const variant = strataVariant(name, env.layout)
      return strataPolicyStrategy(env, name, variant.policy, variant.layout)
    }
    case "oracle":
      return oracleStrategy(env)
  }
}

/**
 * Chat sessions' request layouts (`--session chat`): the flat layout with no breakpoint
 * (`none`) or one trailing breakpoint (`trailing`), Aider's fixed `segments`, an
 * append-only `transcript`, Strata's pipeline, and the `oracle` layout the content
 * bound is scored on. The strategy table (`../strategies.ts`) names them.
 */
import { Effect } from "effect"
import {
  ACK,
  FILE_TREE_HEADER,
  FILES_ACTIVE_HEADER,
  formatFile,
  formatFiles,
  REPO_MAP_HEADER,
  withReminder,
  type AssemblyInput,
  type CachedTier,
  type Message,
  type NeutralRequest
} from "@strata/core/effect"
import { placeWith } from "@strata/providers"
import type { SessionEnv, Strategy, TurnInput } from "./strategyTypes.ts"
import { flatAssembler, mapBlocks, mapStartOf, mapText, requestOf, ShownMap, statelessStrategy, strataStrategy, type MapStart, type StrataStrategyName } from "./strategyParts.ts"

const place = (env: SessionEnv, request: NeutralRequest): unknown => placeWith(env.provider, request).body

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

/**
 * `none` and `trailing`: the pipeline's flat layout (the tiered layout's order without tiers, docs/pipeline.md: system
 * with the symbol map, file tree, Working Files, history, prompt). `none` has no
 * breakpoint; `trailing` has one, on the last message.
 */
export const chatFlatStrategy = (env: SessionEnv, name: "none" | "trailing"): Strategy<TurnInput> => {
  const flat = flatAssembler(env.provider, env.counter)
  return {
    name,
    request: async (turn) => {
      flat.state.map = turn.map
      const result = await flat.assemble(assemblyInput(env, turn))
      if (name === "none") return { body: result.placed.body }
      const request = result.request
      const tier: CachedTier = "L3"
      return {
        body: place(env, {
          ...request,
          blocks: request.blocks.map((b) => ({ ...b, tier })),
          breakpoints: [{ tier, messageIndex: request.messages.length - 1 }]
        })
      }
    },
    answered: async () => {},
    dispose: flat.dispose
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

export const chatSegmentsStrategy = (env: SessionEnv): Strategy<TurnInput> => statelessStrategy("segments", (turn) => ({ body: place(env, segmentsRequest(env, turn)) }))

/**
 * `transcript`: an append-only conversation. The first request carries the system
 * prompt with the symbol map and the file tree as they were at the start. Every turn
 * then appends one user message (with an `Ok.` reply) holding what changed since it was
 * last shown: the symbol blocks of files that are new or changed (and the paths of
 * files gone), the file tree when it changed, and the selected files that are new or
 * changed; then the prompt. The reply is appended after. So the conversation carries
 * the same information as the other strategies, plus the superseded copies (counted as
 * `supersededTokens`). One breakpoint, on the last message. When the conversation
 * passes its window it is compacted (core's `HistoryCompactor`) and everything since
 * the start is shown afresh.
 */
export const chatTranscriptStrategy = (env: SessionEnv): Strategy<TurnInput> => {
  let head: ReadonlyArray<Message> | undefined
  let start: MapStart | undefined
  let conversation: Array<Message> = []
  const shown = new ShownMap(env.counter)
  let shownFiles = new Map<string, string>()
  // Superseded copies of files shown again (changed); the map's are `shown.superseded`.
  let supersededFiles = 0
  return {
    name: "transcript",
    request: async (turn) => {
      if (head === undefined || start === undefined) {
        head = [
          { role: "system", content: `${env.systemPrompt}\n\n${mapText(turn.map, new Set())}` },
          ...(turn.map.fileTree === "" ? [] : [{ role: "user" as const, content: FILE_TREE_HEADER + turn.map.fileTree }, { role: "assistant" as const, content: ACK }])
        ]
        start = mapStartOf(turn.map)
        shown.reset(start)
      }
      const compacted = await Effect.runPromise(env.transcriptCompactor.compactHistoryIfNeeded(conversation))
      if (compacted.compacted) {
        conversation = [...compacted.history]
        shownFiles = new Map()
        shown.reset(start)
        supersededFiles = 0
      }
      const changedFiles = turn.files.filter((f) => shownFiles.get(f.path) !== f.content)
      const sections = [...shown.delta(turn.map, selectedPaths(turn)), formatFiles(changedFiles, FILES_ACTIVE_HEADER)].filter((section) => section !== "")
      if (sections.length > 0) conversation.push({ role: "user", content: sections.join("\n\n") }, { role: "assistant", content: ACK })
      for (const f of changedFiles) {
        const old = shownFiles.get(f.path)
        if (old !== undefined) supersededFiles += env.counter.count(old)
        shownFiles.set(f.path, f.content)
      }
      conversation.push(promptMessage(env, turn))
      return {
        body: place(env, requestOf(env.model, [{ tier: "L3", messages: [...head, ...conversation] }], env.counter)),
        supersededTokens: shown.superseded + supersededFiles
      }
    },
    answered: (turn) => {
      conversation.push({ role: "assistant", content: turn.reply })
      return Promise.resolve()
    },
    dispose: async () => {}
  }
}

/** `strata-<policy>` in a chat: the turn's files, history and prompt through the pipeline (`strataStrategy`). */
export const chatStrataStrategy = (env: SessionEnv, name: StrataStrategyName): Strategy<TurnInput> =>
  strataStrategy(name, env.layout, {
    provider: env.provider,
    counter: env.counter,
    cacheTargetTokens: env.cacheTargetTokens,
    state: (turn) => ({ map: turn.map, tools: [] }),
    assemblyInput: (turn) => assemblyInput(env, turn),
    t: (turn) => turn.t,
    compacted: (turn) => turn.historyCompacted,
    counts: (_turn, result) => ({ supersededTokens: result.journal?.staleTokens ?? 0 })
  })

/**
 * The oracle's layout: the turn's information (the same as the flat layout's) with
 * every item in its own text block: system prompt, map header and legend, each symbol
 * block, the file tree, each selected file, each history message, the prompt. It is
 * not scored by a cache simulator but by the content bound over its blocks (`bound.ts`).
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

export const chatOracleStrategy = (env: SessionEnv): Strategy<TurnInput> => statelessStrategy("oracle", (turn) => ({ body: place(env, oracleRequest(env, turn)) }))

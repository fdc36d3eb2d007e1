/**
 * Agent mode's strategies (`--session agent`, `--transcript`): how each lays out the
 * same agent request (tools, system prompt, symbol map, a conversation of tool
 * exchanges) as a provider body. Baselines are what agents do today: nothing cached,
 * an append-only transcript with one trailing breakpoint (and with old tool results
 * cleared), the `strataCache()` AI SDK middleware over that transcript; then Strata's
 * pipeline under each policy, and the oracle layout the bound is scored on.
 */
import {
  ACK,
  FILE_TREE_HEADER,
  FILES_ACTIVE_HEADER,
  formatFile,
  formatFiles,
  REPO_MAP_HEADER,
  summaryPair,
  toolOutputText,
  type AssemblyInput,
  type ContentPart,
  type FileContent,
  type Message,
  type NeutralRequest,
  type SymbolMapSnapshot,
  type TokenCounter,
  type ToolDefinition,
  type ToolResultPart
} from "@strata/core/effect"
import { applyPlan, makeCachePlanner, nativeBodyOf, placeWith, type CachePlanner, type NativeTarget, type Prompt, type PromptMessage, type PromptPart } from "@strata/providers"
import { readPathOf } from "./readPath.ts"
import type { AgentEnv, ReplayProvider, Strategy } from "./strategyTypes.ts"
import { EMPTY_MAP, flatAssembler, mapBlocks, mapStartOf, mapText, requestOf, ShownMap, statelessStrategy, strataStrategy, withTools, type MapStart, type StrataStrategyName } from "./strategyParts.ts"

/** One request of an agent session, as every strategy gets it. */
export interface AgentRequest {
  /** 0-based request number in the session. */
  readonly index: number
  /** 0-based task number (a commit; in a recorded session, a user prompt). */
  readonly task: number
  /** Seconds since the session started. */
  readonly t: number
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly systemPrompt: string
  /** The repository's symbol map and file tree; undefined when the session has none. */
  readonly map: SymbolMapSnapshot | undefined
  /**
   * The files the agent's app keeps in context for the current task (the task's files as
   * they were before it, sorted by path); empty when it keeps none (a recorded session).
   */
  readonly files: ReadonlyArray<FileContent>
  /**
   * The conversation this request sends, as the session keeps it (compacted between
   * tasks): what `none`, Strata and the oracle lay out. Ends with the task's prompt or
   * with tool results.
   */
  readonly conversation: ReadonlyArray<Message>
  /** True when `conversation` was compacted or rewritten since the previous request. */
  readonly conversationCompacted: boolean
  /** Messages new since the previous request (its reply and tool results; a task's prompt): what a transcript appends. */
  readonly appended: ReadonlyArray<Message>
  /** The first request of a task: the last of `appended` is its prompt. */
  readonly taskStart: boolean
  /** A recorded session rewrote its conversation here (its agent compacted): the transcripts restart from it. */
  readonly rewritten?: ReadonlyArray<Message> | undefined
}

/** What `transcript-clear` leaves in place of a cleared tool result. */
export const CLEARED_PLACEHOLDER = "[Old tool result content cleared]"

// ---------------------------------------------------------------------------------------
// Shared pieces

const place = (env: AgentEnv, request: NeutralRequest, tools: ReadonlyArray<ToolDefinition>): unknown =>
  placeWith(env.provider, withTools(request, tools)).body

/** Token counts per message object (messages are shared between requests, so each is counted once). */
const messageTokens = (counter: TokenCounter) => {
  const memo = new WeakMap<Message, number>()
  return (m: Message): number => {
    let n = memo.get(m)
    if (n === undefined) {
      n = counter.countMessage(m)
      memo.set(m, n)
    }
    return n
  }
}

const toolResults = (messages: ReadonlyArray<Message>): ReadonlyArray<ToolResultPart> =>
  messages.flatMap((m) => (m.role === "tool" ? m.content : []))

/**
 * Tokens of superseded file reads in a conversation: the result of a file read whose
 * path is read again later (the later copy replaces it). Error results and cleared
 * results do not count.
 */
export const supersededReadTokens = (messages: ReadonlyArray<Message>, count: (text: string) => number): number => {
  const pathOf = new Map<string, string>()
  for (const m of messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue
    for (const p of m.content) {
      if (p.type !== "tool-call") continue
      const path = readPathOf(p)
      if (path !== undefined) pathOf.set(p.toolCallId, path)
    }
  }
  const reads = new Map<string, Array<number>>()
  for (const r of toolResults(messages)) {
    const path = pathOf.get(r.toolCallId)
    if (path === undefined || r.output.type !== "text" || r.output.value === CLEARED_PLACEHOLDER) continue
    const list = reads.get(path) ?? []
    list.push(count(r.output.value))
    reads.set(path, list)
  }
  let total = 0
  for (const list of reads.values()) for (const n of list.slice(0, -1)) total += n
  return total
}

/** Every string of a body (texts, tool outputs, arguments), for telling which tool outputs a body still carries. */
const bodyStrings = (body: unknown): { readonly has: (text: string) => boolean } => {
  const strings = new Set<string>()
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.add(value)
    else if (Array.isArray(value)) for (const v of value) walk(v)
    else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) walk(v)
  }
  walk(body)
  let json: string | undefined
  return {
    has: (text) => {
      if (strings.has(text)) return true
      json ??= JSON.stringify(body)
      return json.includes(JSON.stringify(text).slice(1, -1))
    }
  }
}

/**
 * Tokens of the conversation's tool outputs a body does not carry: what a
 * context-editing stage cleared (0 when nothing clears).
 */
export const clearedTokensOf = (conversation: ReadonlyArray<Message>, body: unknown, count: (text: string) => number): number => {
  const results = toolResults(conversation)
  if (results.length === 0) return 0
  const strings = bodyStrings(body)
  let cleared = 0
  for (const r of results) {
    const text = toolOutputText(r.output)
    if (text.length > 0 && !strings.has(text)) cleared += count(text)
  }
  return cleared
}

/**
 * The session's conversation as `AssemblyInput`: all of it is history, the prompt is
 * empty (the pipeline sends no prompt message then). An agent's task prompt is one user
 * message of its conversation from the first request on, so the pipeline caches it as
 * soon as it is sent, as the agent's own transcript does; as `prompt` it would sit in
 * the uncached active block once and be written the step after.
 */
const assemblyInput = (env: AgentEnv, request: AgentRequest): AssemblyInput => ({
  model: env.model,
  prompt: "",
  systemPrompt: request.systemPrompt,
  files: request.files,
  history: request.conversation,
  useRepoMap: request.map !== undefined
})

// ---------------------------------------------------------------------------------------
// none

/** `none`: the pipeline's flat layout (system prompt with the symbol map, file tree, history), priced with caching off. */
export const agentNoneStrategy = (env: AgentEnv): Strategy<AgentRequest> => {
  const flat = flatAssembler(env.provider, env.counter)
  const count = (text: string) => env.counter.count(text)
  return {
    name: "none",
    request: async (request) => {
      flat.state.map = request.map ?? EMPTY_MAP
      flat.state.tools = request.tools
      const result = await flat.assemble(assemblyInput(env, request))
      return { body: result.placed.body, supersededTokens: supersededReadTokens(request.conversation, count) }
    },
    answered: async () => {},
    dispose: flat.dispose
  }
}

// ---------------------------------------------------------------------------------------
// The transcript the leading agents keep

const firstLine = (m: Message | undefined): string => {
  if (m === undefined) return ""
  const text = typeof m.content === "string" ? m.content : m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
  return (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 120)
}

/**
 * An append-only conversation as the leading coding agents keep it: the first request
 * holds the system prompt with the symbol map and the file tree as they were at the
 * start; each task appends what changed in the map since it was last shown and the
 * task's files new or changed since last attached (a user message the providers read
 * with the prompt, as the agents attach files and reminders: no synthetic turn after the
 * conversation starts), then its prompt; each step appends the model's reply and the
 * tool results. When the input passes `transcriptWindowTokens` the conversation is
 * compacted the way the agents do it: a summary of the earlier tasks replaces them, the
 * current task stays whole, and the map is shown afresh from the start.
 */
class TranscriptLog {
  private head: ReadonlyArray<Message> = []
  private system: string | undefined
  private start: MapStart = mapStartOf(undefined)
  private past: Array<Message> = []
  private delta: ReadonlyArray<Message> = []
  private task: Array<Message> = []
  private readonly shown: ShownMap
  private shownFiles = new Map<string, string>()
  // Superseded copies of files attached again (changed); the map's are `shown.superseded`.
  private supersededFiles = 0
  private subjects: Array<string> = []
  private readonly tokens: (m: Message) => number
  private readonly env: AgentEnv
  compactions = 0

  constructor(env: AgentEnv) {
    this.env = env
    this.tokens = messageTokens(env.counter)
    this.shown = new ShownMap(env.counter)
  }

  /** Apply one request: append what is new, show map changes at a task's start, compact near the window. */
  update(request: AgentRequest): void {
    if (this.system !== request.systemPrompt) this.begin(request)
    if (request.rewritten !== undefined) {
      this.past = []
      this.delta = []
      this.task = [...request.rewritten]
      this.resetShown()
    } else if (request.taskStart) {
      this.task.push(...request.appended.slice(0, -1))
      this.past.push(...this.delta, ...this.task)
      this.delta = this.deltaFor(request)
      this.task = request.appended.slice(-1)
      this.subjects.push(firstLine(request.appended.at(-1)))
    } else {
      this.task.push(...request.appended)
    }
    if (this.past.length > 0 && this.inputTokens(request.tools) > this.env.transcriptWindowTokens) {
      const earlier = this.subjects.slice(0, -1)
      this.past = [...summaryPair(`Earlier in this session: ${earlier.length === 0 ? "work on this repository" : earlier.join("; ")}`.slice(0, 8_000))]
      this.resetShown()
      this.delta = this.deltaFor(request)
      this.compactions++
    }
  }

  /** The conversation the transcript sends now. */
  messages(): ReadonlyArray<Message> {
    return [...this.head, ...this.past, ...this.delta, ...this.task]
  }

  /** Superseded copies it carries: map blocks and file tree shown again, files attached again changed, and files read again. */
  superseded(messages: ReadonlyArray<Message>): number {
    return this.shown.superseded + this.supersededFiles + supersededReadTokens(messages, (t) => this.env.counter.count(t))
  }

  private inputTokens(tools: ReadonlyArray<ToolDefinition>): number {
    let n = tools.length === 0 ? 0 : this.env.counter.count(JSON.stringify(tools))
    for (const m of this.messages()) n += this.tokens(m)
    return n
  }

  private begin(request: AgentRequest): void {
    const map = request.map
    this.system = request.systemPrompt
    const system = map === undefined ? request.systemPrompt : `${request.systemPrompt}\n\n${mapText(map, new Set())}`
    this.head = [
      ...(system.trim() === "" ? [] : [{ role: "system" as const, content: system }]),
      ...(map === undefined || map.fileTree === "" ? [] : [{ role: "user" as const, content: FILE_TREE_HEADER + map.fileTree }, { role: "assistant" as const, content: ACK }])
    ]
    this.start = mapStartOf(map)
    this.resetShown()
  }

  private resetShown(): void {
    this.shown.reset(this.start)
    this.shownFiles = new Map()
    this.supersededFiles = 0
  }

  /**
   * The map changes since last shown and the task's files new or changed since last
   * attached, as one user message before the task's prompt (no acknowledgement: the
   * providers read it as part of the prompt's message); records them as shown.
   */
  private deltaFor(request: AgentRequest): ReadonlyArray<Message> {
    const map = request.map === undefined ? [] : this.shown.delta(request.map, new Set())
    const changed = request.files.filter((f) => this.shownFiles.get(f.path) !== f.content)
    for (const f of changed) {
      const old = this.shownFiles.get(f.path)
      if (old !== undefined) this.supersededFiles += this.env.counter.count(old)
      this.shownFiles.set(f.path, f.content)
    }
    const sections = [...map, formatFiles(changed, FILES_ACTIVE_HEADER)].filter((section) => section !== "")
    return sections.length === 0 ? [] : [{ role: "user", content: sections.join("\n\n") }]
  }
}

/** A neutral request of the whole conversation with one breakpoint, on its last message. */
const trailingRequest = (env: AgentEnv, messages: ReadonlyArray<Message>): NeutralRequest =>
  requestOf(env.model, [{ tier: "L3", messages }], env.counter)

/** `transcript`: the append-only conversation, one breakpoint on its last block. */
export const agentTranscriptStrategy = (env: AgentEnv): Strategy<AgentRequest> => {
  const log = new TranscriptLog(env)
  return {
    name: "transcript",
    request: (request) => {
      log.update(request)
      const messages = log.messages()
      return Promise.resolve({ body: place(env, trailingRequest(env, messages), request.tools), supersededTokens: log.superseded(messages) })
    },
    answered: async () => {},
    dispose: async () => {}
  }
}

/**
 * The conversation with old tool results cleared the way Anthropic's `clear_tool_uses`
 * edit does it, request by request: when the input passes the trigger, every tool
 * result but those of the last `keep` tool uses is replaced by a placeholder (the calls
 * stay). Returns the messages sent and the tokens cleared.
 */
export const clearOldToolResults = (
  messages: ReadonlyArray<Message>,
  keep: number,
  count: (text: string) => number
): { readonly messages: ReadonlyArray<Message>; readonly clearedTokens: number } => {
  const ids: Array<string> = []
  for (const m of messages) if (m.role === "assistant" && typeof m.content !== "string") for (const p of m.content) if (p.type === "tool-call") ids.push(p.toolCallId)
  const kept = new Set(ids.slice(Math.max(0, ids.length - keep)))
  let clearedTokens = 0
  const out = messages.map((m): Message => {
    if (m.role !== "tool" || m.content.every((r) => kept.has(r.toolCallId) || toolOutputText(r.output) === CLEARED_PLACEHOLDER)) return m
    return {
      role: "tool",
      content: m.content.map((r) => {
        if (kept.has(r.toolCallId) || toolOutputText(r.output) === CLEARED_PLACEHOLDER) return r
        clearedTokens += Math.max(0, count(toolOutputText(r.output)) - count(CLEARED_PLACEHOLDER))
        return { ...r, output: { type: "text" as const, value: CLEARED_PLACEHOLDER } }
      })
    }
  })
  return { messages: out, clearedTokens }
}

/** `transcript-clear`: the transcript, with old tool results cleared past the trigger (`clearOldToolResults`). */
export const transcriptClearStrategy = (env: AgentEnv): Strategy<AgentRequest> => {
  const log = new TranscriptLog(env)
  const tokens = messageTokens(env.counter)
  const count = (text: string) => env.counter.count(text)
  return {
    name: "transcript-clear",
    request: (request) => {
      log.update(request)
      const full = log.messages()
      const input = full.reduce((n, m) => n + tokens(m), request.tools.length === 0 ? 0 : count(JSON.stringify(request.tools)))
      const { messages, clearedTokens } = input > env.clearTriggerTokens
        ? clearOldToolResults(full, env.clearKeepToolUses, count)
        : { messages: full, clearedTokens: 0 }
      return Promise.resolve({ body: place(env, trailingRequest(env, messages), request.tools), supersededTokens: log.superseded(messages), clearedTokens })
    },
    answered: async () => {},
    dispose: async () => {}
  }
}

/** A prompt part: any object with a `type` is one (the AI SDK's parts carry more fields than the middleware reads). */
const promptPart = <P extends PromptPart>(part: P): PromptPart => part

/** A core message as the AI SDK's language-model prompt carries it. */
export const promptMessageOf = (m: Message): PromptMessage => {
  const part = (p: ContentPart): PromptPart =>
    p.type === "text" ? promptPart({ type: "text", text: p.text }) : promptPart({ type: "file", mediaType: p.mediaType ?? "image/png", data: p.url })
  switch (m.role) {
    case "system":
      return { role: "system", content: typeof m.content === "string" ? m.content : m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n") }
    case "user":
      return { role: "user", content: typeof m.content === "string" ? [promptPart({ type: "text", text: m.content })] : m.content.map(part) }
    case "assistant":
      return {
        role: "assistant",
        content: typeof m.content === "string"
          ? [promptPart({ type: "text", text: m.content })]
          : m.content.map((p): PromptPart => {
            switch (p.type) {
              case "text":
              case "image":
                return part(p)
              case "reasoning":
                return promptPart({ type: "reasoning", text: p.text, ...(p.signature === undefined ? {} : { providerOptions: { [p.provider]: { signature: p.signature } } }) })
              case "tool-call":
                return promptPart({ type: "tool-call", toolCallId: p.toolCallId, toolName: p.toolName, input: p.input })
            }
          })
      }
    case "tool":
      return { role: "tool", content: m.content.map((r) => promptPart({ type: "tool-result", toolCallId: r.toolCallId, toolName: r.toolName, output: r.output })) }
  }
}

/** Tool definitions as `@ai-sdk/anthropic` or `@ai-sdk/amazon-bedrock` send them. */
const middlewareTools = (target: NativeTarget, tools: ReadonlyArray<ToolDefinition>): Readonly<Record<string, unknown>> => {
  if (tools.length === 0) return {}
  return target === "anthropic"
    ? { tools: tools.map((t) => ({ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), input_schema: t.inputSchema })) }
    : { toolConfig: { tools: tools.map((t) => ({ toolSpec: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), inputSchema: { json: t.inputSchema } } })) } }
}

/** The providers `strataCache()` places breakpoints for (it sets a cache key for OpenAI and passes others through). */
export const MIDDLEWARE_PROVIDERS: ReadonlyArray<ReplayProvider> = ["anthropic", "bedrock"]

/**
 * `middleware`: the same transcript through the `strataCache()` AI SDK middleware: each
 * request planned in order by its planner (one conversation), marked and rendered as
 * the AI SDK provider sends it, as `cachedPromptBodies` does for a whole sequence.
 */
export const middlewareStrategy = (env: AgentEnv): Strategy<AgentRequest> => {
  if (env.provider !== "anthropic" && env.provider !== "bedrock") {
    throw new Error(`the middleware strategy runs on ${MIDDLEWARE_PROVIDERS.join(" and ")} (strataCache places no breakpoint for ${env.provider})`)
  }
  const target: NativeTarget = env.provider
  const log = new TranscriptLog(env)
  const planner: CachePlanner = makeCachePlanner({ target, model: env.model, countTokens: (t) => env.counter.count(t) })
  return {
    name: "middleware",
    request: (request) => {
      log.update(request)
      const messages = log.messages()
      const prompt: Prompt = messages.map(promptMessageOf)
      const extra = { ...(target === "anthropic" ? { max_tokens: 4096 } : {}), ...middlewareTools(target, request.tools) }
      // The planner sees the tools as the AI SDK passes them to the model (`params.tools`).
      const tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.inputSchema }))
      const body = nativeBodyOf(applyPlan(prompt, planner.plan(prompt, request.t, tools), target), target, env.model, extra)
      return Promise.resolve({ body, supersededTokens: log.superseded(messages) })
    },
    answered: async () => {},
    dispose: async () => {}
  }
}

// ---------------------------------------------------------------------------------------
// Strata

/**
 * `strata-<policy>` in an agent session: the request's conversation, tools and map
 * through the pipeline (`strataStrategy`), with whatever stages it runs by default
 * (context editing included, where the pipeline has it).
 */
export const agentStrataStrategy = (env: AgentEnv, name: StrataStrategyName): Strategy<AgentRequest> => {
  const count = (text: string) => env.counter.count(text)
  return strataStrategy(name, env.layout, {
    provider: env.provider,
    counter: env.counter,
    cacheTargetTokens: env.cacheTargetTokens,
    state: (request) => ({ map: request.map ?? EMPTY_MAP, tools: request.tools }),
    assemblyInput: (request) => assemblyInput(env, request),
    t: (request) => request.t,
    compacted: (request) => request.conversationCompacted,
    counts: (request, result) => ({
      supersededTokens: (result.journal?.staleTokens ?? 0) + supersededReadTokens(request.conversation, count),
      clearedTokens: clearedTokensOf(request.conversation, result.placed.body, count)
    })
  })
}

// ---------------------------------------------------------------------------------------
// Oracle

/**
 * The oracle's layout of an agent request: every item in its own block (each tool,
 * the system prompt, the map header with the legend, each symbol block, the file tree,
 * each file in context, each message part of the conversation), for the bound to price
 * one by one.
 */
export const agentOracleRequest = (env: AgentEnv, request: AgentRequest): NeutralRequest => {
  const text = (t: string) => ({ type: "text" as const, text: t })
  const map = request.map
  const system = [
    ...(request.systemPrompt === "" ? [] : [text(request.systemPrompt)]),
    ...(map === undefined ? [] : [text(REPO_MAP_HEADER + map.legend), ...mapBlocks(map, new Set()).map(text)])
  ]
  const context = [
    ...(map === undefined || map.fileTree === "" ? [] : [text(FILE_TREE_HEADER + map.fileTree)]),
    ...(request.files.length === 0 ? [] : [text(FILES_ACTIVE_HEADER), ...request.files.map((f) => text(formatFile(f.path, f.content)))])
  ]
  return withTools(requestOf(env.model, [
    {
      tier: "active",
      messages: [
        ...(system.length === 0 ? [] : [{ role: "system" as const, content: system }]),
        ...(context.length === 0 ? [] : [{ role: "user" as const, content: context }, { role: "assistant" as const, content: ACK }]),
        ...request.conversation
      ]
    }
  ], env.counter), request.tools)
}

export const agentOracleStrategy = (env: AgentEnv): Strategy<AgentRequest> =>
  statelessStrategy("oracle", (request) => ({ body: placeWith(env.provider, agentOracleRequest(env, request)).body }))

/**
 * The work of `strata chat` (loaded when it runs). One turn: assemble through the
 * pipeline, send through the provider's LLM client (or, dry, only show the request),
 * stream the reply, commit the tracker only on success, store the exchange, compact the
 * history when it grows past the budget, then print the provider's usage and the HUD.
 * When the reply calls the repository tools, they run and the loop sends the next
 * request, each round (its calls with their results) one commit once the provider said
 * it finished.
 */
import { join } from "node:path"
import { Clock, Effect, Fiber, Layer, Option, Stream } from "effect"
import { HistoryCompactor, formatTokens, rewriteSessionHistory, type Message, type SessionRecord, type ToolCallPart, type ToolResultPart, type Usage } from "@strata/core/effect"
import { compactionModelLayer, LlmClient, type LlmClientShape, type LlmProvider } from "@strata/providers"
import type { PolicyName, ProviderName } from "../support/config.ts"
import { normalizeSelection, simulateUsage, type StoredRequest } from "../support/wiring.ts"
import { ApiKeyMissing, diagnose, Unavailable, UsageError } from "../support/errors.ts"
import { opt } from "../support/flags.ts"
import { commandContext } from "../support/context.ts"
import { readTextIfExists, writeTextAtomic } from "../support/fsutil.ts"
import { jsonDocument, Output, terminalSafe } from "../support/output.ts"
import { beginCliTurn, colourChanges, COMMIT_RETRIES, describeBreakpoints, describeUsage, recordCliTurn } from "./assemble.ts"
import { lastMissReason } from "./explain.ts"
import { hudLines } from "./hud.ts"
import { prepare, SESSION_PROMPT_PACK, type Prepared } from "./shared.ts"
import { CliEnvironment } from "../support/environment.ts"
import { REPO_TOOLS, runRepoTool } from "../tools/index.ts"
import { addLine, CHAT_HELP, costLines, dropLine, modelLines, sumUsage, tokenLines, type TurnUsage } from "./chatCommands.ts"

export interface ChatFlags {
  readonly once: Option.Option<string>
  readonly file: ReadonlyArray<string>
  readonly provider: Option.Option<ProviderName>
  readonly model: Option.Option<string>
  readonly policy: Option.Option<PolicyName>
  readonly dryRun: boolean
  readonly noHud: boolean
  readonly timeoutMs: Option.Option<number>
  /** Offer no tools: every turn is one request. */
  readonly noTools: boolean
  /** Tool rounds one prompt may run before the model must answer. */
  readonly maxToolRounds: Option.Option<number>
  /** Let the tools read gitignored and secret files (or `allowIgnored` in the config file). */
  readonly allowIgnored?: boolean | undefined
  /** The session's name, over the configured one. */
  readonly session?: Option.Option<string> | undefined
  /** Continue the session the last chat in this repository used. */
  readonly continue?: boolean | undefined
}

/** Where chat remembers the session it used last, for `--continue`. */
export const LAST_CHAT_SESSION_PATH = join(".strata", "last-chat-session")

/**
 * The session `--continue` picks: the one the last chat in the repository used, as
 * remembered in `LAST_CHAT_SESSION_PATH`. Fails with a usage error when no chat ran yet,
 * or together with `--session`.
 */
const continuedSession = (flags: ChatFlags) =>
  Effect.gen(function* () {
    const named = flags.session === undefined ? undefined : opt(flags.session)
    if (flags.continue !== true) return named
    if (named !== undefined) return yield* new UsageError({ reason: "--continue and --session cannot be used together: --continue picks the last chat's session" })
    const ctx = yield* commandContext({})
    const last = (yield* readTextIfExists(ctx.root, LAST_CHAT_SESSION_PATH))?.trim()
    if (last === undefined || last === "") {
      return yield* new UsageError({ reason: `no chat has run in ${ctx.root} yet, so there is no session to continue`, hint: "start one with `strata chat` (or `strata chat --session NAME`)" })
    }
    return last
  })

/** After this long without a stream event, chat says it is waiting for the provider. */
const WAITING_NOTICE_MS = 3000

/** Tool rounds one prompt may run by default. */
export const DEFAULT_TOOL_ROUNDS = 8

/** Which LLM client sends a provider's bodies; undefined when there is none. */
export const clientFor = (provider: ProviderName): LlmProvider | undefined =>
  provider === "anthropic" ? "anthropic" : provider === "openai" || provider === "openai-compatible" ? "openai" : provider === "bedrock" ? "bedrock" : undefined

/** The environment variables that hold a provider's credentials. Pure. */
export const credentialVariables = (provider: ProviderName): ReadonlyArray<string> => {
  switch (provider) {
    case "anthropic":
      return ["ANTHROPIC_API_KEY"]
    case "openai":
    case "openai-compatible":
      return ["OPENAI_API_KEY"]
    case "bedrock":
      return ["AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE"]
    case "gemini":
      return ["GEMINI_API_KEY"]
    case "ai-sdk":
      return []
  }
}

/** True when one of the provider's credential variables is set. Pure. */
export const hasCredentials = (provider: ProviderName, env: Readonly<Record<string, string | undefined>>): boolean =>
  credentialVariables(provider).some((v) => (env[v] ?? "") !== "")

interface Turn {
  readonly reply: string | undefined
  readonly usage: Usage | undefined
  /** Usage summed over every round of the prompt (its tool rounds too). */
  readonly promptUsage?: Usage | undefined
  readonly session: SessionRecord
  /** A dry turn's request, which the next dry turn is simulated against (nothing is saved). */
  readonly dryRequest?: StoredRequest
}

export const runChat = (flags: ChatFlags) =>
  Effect.gen(function* () {
    const timeoutMs = opt(flags.timeoutMs)
    if (timeoutMs !== undefined && timeoutMs <= 0) return yield* new UsageError({ reason: `--timeout-ms must be a positive number of milliseconds, got ${timeoutMs}` })
    const maxToolRounds = opt(flags.maxToolRounds) ?? DEFAULT_TOOL_ROUNDS
    if (!Number.isInteger(maxToolRounds) || maxToolRounds < 1) return yield* new UsageError({ reason: `--max-tool-rounds must be a whole number of at least 1, got ${maxToolRounds}` })
    const session = yield* continuedSession(flags)
    const prepared = yield* prepare(
      { provider: opt(flags.provider), model: opt(flags.model), policy: opt(flags.policy), timeoutMs, ...(session === undefined ? {} : { session }) },
      { dryRun: flags.dryRun, promptPack: SESSION_PROMPT_PACK }
    )
    const { ctx } = prepared
    // Remembered for `--continue` (a dry run writes nothing under .strata/).
    if (!flags.dryRun) yield* writeTextAtomic(ctx.root, LAST_CHAT_SESSION_PATH, `${ctx.config.session}\n`)
    const tools: ChatTools | undefined = flags.noTools
      ? undefined
      : { maxRounds: maxToolRounds, allowIgnored: flags.allowIgnored === true || ctx.file?.allowIgnored === true }
    const output = yield* Output
    const { env } = yield* CliEnvironment
    const provider = ctx.config.provider
    const client = clientFor(provider)
    let dryRun = flags.dryRun
    if (!dryRun) {
      if (client === undefined) {
        return yield* new Unavailable({
          feature: `chat with --provider ${provider}`,
          reason: "Strata has LLM clients for anthropic, openai, openai-compatible and bedrock; use one of those, or --dry-run to see the requests"
        })
      }
      if (!hasCredentials(provider, env)) {
        const missing = new ApiKeyMissing({ provider, variables: credentialVariables(provider) })
        // On a terminal, offer the dry run instead of just failing.
        const answer = yield* output.ask(`${missing.message}.\nContinue with --dry-run (show each request, send nothing)? [y/N] `)
        if (answer === undefined || !/^y(es)?$/i.test(answer.trim())) return yield* missing
        dryRun = true
      }
    }
    const baseUrl = env["STRATA_BASE_URL"]
    const llmLayer = dryRun || client === undefined
      ? undefined
      : LlmClient.layer(client, { ...(baseUrl === undefined || baseUrl === "" ? {} : { baseUrl }), model: ctx.config.model, timeoutMs: ctx.config.timeoutMs })

    // Built once: the client (and its SDK) serves every turn and the compactor.
    const llm = llmLayer === undefined ? undefined : yield* Effect.provide(Effect.gen(function* () {
      return yield* LlmClient
    }), llmLayer)
    const loop = Effect.gen(function* () {
      let session = prepared.state.record
      let selected = flags.file.length > 0 ? yield* normalizeSelection(flags.file) : session.selected
      yield* prepared.engine.symbolMap
      const once = opt(flags.once)
      if (once === undefined && !ctx.json) {
        yield* output.err(
          output.errStyle.dim(
            `strata chat on ${ctx.root} (${provider}, ${ctx.config.model}, session ${ctx.config.session}${dryRun ? ", dry run: nothing is sent" : ""}). /help for commands, Ctrl-D to leave.`
          )
        )
      }
      let lastDry: StoredRequest | undefined
      const answered: Array<TurnUsage> = []
      const runTurn = (prompt: string) =>
        Effect.gen(function* () {
          const turn = yield* chatTurn(prepared, session, selected, prompt, llm, flags.noHud, lastDry, tools)
          session = turn.session
          lastDry = turn.dryRequest ?? lastDry
          answered.push({ prompt, usage: turn.promptUsage ?? turn.usage })
        })
      const reportFailure = (error: unknown) => {
        const d = diagnose(error)
        return output.err(output.errStyle.red(`strata: ${terminalSafe(d.message)}`) + (d.hint === undefined ? "" : `\n${output.errStyle.dim(`hint: ${terminalSafe(d.hint)}`)}`))
      }
      if (once !== undefined) return yield* runTurn(once)
      while (true) {
        const line = yield* output.readLine(output.errStyle.cyan("you> "))
        if (line === undefined) return
        const text = line.trim()
        if (text === "") continue
        if (text.startsWith("/")) {
          const [command = "", ...rest] = text.split(/\s+/)
          const arg = rest.join(" ")
          if (command === "/quit" || command === "/exit") return
          const say = (lines: ReadonlyArray<string>) => Effect.forEach(lines, (l) => output.err(l), { discard: true })
          // A command that fails (a store or provider error) is reported; the loop goes on.
          const orReport = <E, R>(effect: Effect.Effect<void, E, R>) => effect.pipe(Effect.catch((error: unknown) => reportFailure(error)))
          if (command === "/help") yield* say(CHAT_HELP)
          else if (command === "/files") yield* output.err(selected.length === 0 ? "(no files in context)" : selected.join("\n"))
          else if (command === "/add" && arg !== "") {
            const added = yield* normalizeSelection([arg]).pipe(Effect.result)
            if (added._tag === "Failure") yield* output.err(output.errStyle.red(diagnose(added.failure).message))
            else {
              const before = selected
              selected = [...new Set([...selected, ...added.success])].sort()
              yield* output.err(addLine(added.success, before, selected))
            }
          } else if (command === "/drop" && arg !== "") {
            const dropped = dropLine(arg, selected)
            selected = dropped.selected
            yield* output.err(dropped.line)
          } else if (command === "/hud") yield* showHud(prepared, session, selected)
          else if (command === "/model") yield* say(modelLines(provider, ctx.config.model, arg))
          else if (command === "/cost") yield* say(costLines(provider, ctx.config.model, answered, session))
          else if (command === "/tokens") {
            yield* orReport(
              Effect.gen(function* () {
                const next = (yield* beginCliTurn(prepared, "", selected, tools === undefined ? undefined : REPO_TOOLS)).assembly.report.totalTokens
                yield* say(tokenLines(next, session, answered.at(-1)?.usage))
              })
            )
          } else if (command === "/clear") yield* orReport(Effect.flatMap(clearHistory(prepared, dryRun), (line) => say([line])))
          else if (command === "/compact") {
            yield* orReport(
              llm === undefined
                ? say(["nothing to compact in a dry run: compaction asks the provider's model"])
                : Effect.flatMap(compact(prepared, llm, true), (c) => say([c.note ?? "the conversation is already as small as compaction makes it"]))
            )
          } else yield* output.err(`unknown command ${command}; /help lists them`)
          continue
        }
        // A failed turn is reported and the loop goes on; nothing was committed.
        yield* runTurn(text).pipe(Effect.catch((error: unknown) => reportFailure(error)))
      }
    })
    yield* loop.pipe(Effect.provide(prepared.engine.layer))
  })

/** `/clear`: the stored conversation replaced by an empty one (the tracker's history entries purged with it), one commit. */
const clearHistory = (prepared: Prepared, dryRun: boolean) =>
  Effect.gen(function* () {
    if (dryRun || !prepared.records) return "nothing to clear in a dry run: it saves nothing"
    const rewritten = yield* rewriteSessionHistory(
      prepared.state.key,
      (snapshot) => Effect.succeed({ history: snapshot.history.length === 0 ? undefined : [], value: snapshot.history.length }),
      { purgeTracker: true, tracker: "store", retries: COMMIT_RETRIES }
    )
    return rewritten.commit === undefined
      ? "the conversation is already empty"
      : `cleared the conversation (${rewritten.value} message${rewritten.value === 1 ? "" : "s"}); the files in context stay`
  })

const showHud = (prepared: Prepared, session: SessionRecord, selected: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const output = yield* Output
    const report = (yield* beginCliTurn(prepared, "", selected)).assembly.report
    const lastMiss = yield* lastMissReason(prepared.ctx.root, session)
    for (const line of colourChanges(hudLines(report, session, { width: output.errColumns, lastMiss, maxInputTokens: prepared.ctx.config.budgets.maxInputTokens }), output.errStyle)) yield* output.err(line)
  })

/** How the repository tools are offered in a turn. */
interface ChatTools {
  readonly maxRounds: number
  /** Whether the tools may read gitignored and secret files. */
  readonly allowIgnored: boolean
}

/** One request of a turn, as `--json` reports it. */
interface Round {
  readonly text: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: unknown; readonly output: ToolResultPart["output"] }>
  readonly usage: Usage | null
}

/**
 * The calls with an id each that is unique in the history and the reply (a provider may
 * send none, or a gateway repeat one); the id the model gave is kept when it is. Pure.
 */
export const withUniqueIds = (calls: ReadonlyArray<ToolCallPart>, history: ReadonlyArray<Message>, round: number): ReadonlyArray<ToolCallPart> => {
  const seen = new Set<string>()
  for (const m of history) if (m.role === "assistant" && typeof m.content !== "string") for (const p of m.content) if (p.type === "tool-call") seen.add(p.toolCallId)
  return calls.map((call, i) => {
    let id = call.toolCallId
    for (let k = 0; id === "" || seen.has(id); k++) id = `strata_${round}_${i + 1}${k === 0 ? "" : `_${k}`}`
    seen.add(id)
    return id === call.toolCallId ? call : { ...call, toolCallId: id }
  })
}

/** The line that says what a tool call did. Pure. */
export const describeToolCall = (call: ToolCallPart, output: ToolResultPart["output"]): string => {
  const input = JSON.stringify(call.input)
  const args = input.length > 100 ? `${input.slice(0, 100)}...` : input
  const value = typeof output.value === "string" ? output.value : JSON.stringify(output.value)
  const outcome = output.type === "error-text" || output.type === "error-json"
    ? `error: ${value.split("\n")[0] ?? ""}`
    : `${value.split("\n").length.toLocaleString("en-US")} lines`
  return `tool ${call.toolName} ${args} -> ${outcome}`
}

const chatTurn = (
  prepared: Prepared,
  session: SessionRecord,
  selected: ReadonlyArray<string>,
  prompt: string,
  llm: LlmClientShape | undefined,
  noHud: boolean,
  lastDry: StoredRequest | undefined,
  tools: ChatTools | undefined
) =>
  Effect.gen(function* () {
    const { ctx } = prepared
    const output = yield* Output
    const s = output.style
    const rounds: Array<Round> = []
    let current = session
    for (let round = 1; ; round++) {
      // After the first round the prompt is in the history, followed by the tool exchanges.
      const turn = yield* beginCliTurn(prepared, round === 1 ? prompt : "", selected, tools === undefined ? undefined : REPO_TOOLS)
      const result = turn.assembly
      const atMs = yield* Clock.currentTimeMillis
      if (llm === undefined) {
        const at = Math.floor(atMs / 1000)
        const usage = yield* simulateUsage(ctx.root, ctx.config.provider, ctx.config.model, { body: result.placed.body, promptTokens: result.report.totalTokens, breakpoints: result.placed.breakpoints.map((b) => b.prefixTokens) }, at, lastDry)
        if (ctx.json) {
          yield* output.out(jsonDocument({ dryRun: true, request: result.placed.body, report: result.report, simulatedUsage: usage ?? null }))
        } else {
          yield* output.out(s.bold(`(dry run) would send ${result.request.messages.length} messages, ${formatTokens(result.report.totalTokens)} tokens to ${ctx.config.provider} ${ctx.config.model}`))
          for (const line of describeBreakpoints(result.placed)) yield* output.out(s.dim(line))
          yield* output.out(describeUsage(usage, "simulated", ctx.config.provider))
          if (!noHud) for (const line of colourChanges(hudLines(result.report, { ...session, last: null }, { width: output.columns, maxInputTokens: ctx.config.budgets.maxInputTokens }), s)) yield* output.out(line)
          yield* output.out(s.dim("Nothing was sent or saved. Set the API key and drop --dry-run to chat for real."))
        }
        const dryRequest: StoredRequest = { provider: ctx.config.provider, model: ctx.config.model, at, body: result.placed.body }
        return { reply: undefined, usage, session, dryRequest } satisfies Turn
      }

      let reply = ""
      const calls: Array<ToolCallPart> = []
      let usage: Usage | undefined
      // The client fails the stream unless the provider said the reply finished (a cut,
      // truncated, empty or non-JSON reply): the round then fails here, before anything is
      // recorded, and the text shown so far ends its line before the error. Tool calls
      // arrive only once the reply finished.
      // A provider that does not answer is never silent: after a few seconds without an
      // event, say what is awaited and for how long (the timeout ends it).
      const waiting = yield* Effect.forkChild(
        Effect.sleep(WAITING_NOTICE_MS).pipe(
          Effect.andThen(output.err(output.errStyle.dim(`waiting for ${ctx.config.provider} ${ctx.config.model} to answer (up to ${Math.round(ctx.config.timeoutMs / 1000)} s; Ctrl-C stops)...`)))
        )
      )
      yield* llm.stream({ body: result.placed.body }).pipe(
        Stream.runForEach((event) =>
          Effect.gen(function* () {
            yield* Fiber.interrupt(waiting)
            if (event._tag === "TextDelta") {
              reply += event.text
              // Model text never drives the terminal (OSC 52, titles, clears): escaped as it streams.
              if (!ctx.json) yield* output.write(terminalSafe(event.text))
            } else if (event._tag === "ToolCall") {
              calls.push(event.call)
            } else if (event._tag === "Usage") {
              usage = { input: event.usage.input, cacheRead: event.usage.cacheRead, cacheWrite: event.usage.cacheWrite, output: event.usage.output }
            }
          })
        ),
        Effect.onError(() => (reply !== "" && !ctx.json && !reply.endsWith("\n") ? output.write("\n") : Effect.void)),
        Effect.ensuring(Fiber.interrupt(waiting))
      )
      if (!ctx.json && reply !== "") yield* output.write(reply.endsWith("\n") ? "" : "\n")
      // Calls past the round limit are answered, not run: the model is to answer now.
      const asked = withUniqueIds(tools === undefined ? [] : calls, turn.history, round)
      const allowed = tools !== undefined && round <= tools.maxRounds
      const results: Array<ToolResultPart> = []
      for (const call of asked) {
        const answer = allowed
          ? yield* runRepoTool({ root: ctx.root, maxFileBytes: ctx.config.budgets.maxFileBytes, allowIgnored: tools.allowIgnored }, call)
          : { type: "tool-result" as const, toolCallId: call.toolCallId, toolName: call.toolName, output: { type: "error-text" as const, value: `Not run: this prompt used its ${tools?.maxRounds ?? 0} tool rounds (--max-tool-rounds). Answer with what you have.` } }
        results.push(answer)
        if (!ctx.json) yield* output.out(s.dim(terminalSafe(describeToolCall(call, answer.output))))
      }
      const parts = [...(reply === "" ? [] : [{ type: "text" as const, text: reply }]), ...asked]
      const assistant: Message = asked.length === 0 ? { role: "assistant", content: reply } : { role: "assistant", content: parts }
      // Only a request that succeeded is stored, each round as one commit: its prompt (the
      // first round's), the reply with its calls and the results answering them, the
      // tracker, journal and record. A call is never stored without its result.
      const replyMessages: ReadonlyArray<Message> = [assistant, ...(results.length === 0 ? [] : [{ role: "tool" as const, content: results }])]
      current = (yield* recordCliTurn(prepared, turn, { reply: replyMessages, usage, usageSource: "provider", atMs })).record
      rounds.push({ text: reply, toolCalls: asked.map((c, i) => ({ id: c.toolCallId, name: c.toolName, input: c.input, output: results[i]!.output })), usage: usage ?? null })
      if (!ctx.json) yield* output.out(s.cyan(describeUsage(usage, "provider", ctx.config.provider)))
      // The loop ends with an answer, or when the model kept calling after its last round.
      if (asked.length === 0 || round > (tools?.maxRounds ?? 0) + 1) {
        if (asked.length > 0 && !ctx.json) yield* output.out(s.yellow(`The model still called tools after ${tools?.maxRounds ?? 0} tool rounds; stopped without its answer. Raise --max-tool-rounds, or ask again.`))
        const compaction = yield* compact(prepared, llm)
        const ran = rounds.flatMap((r) => r.toolCalls)
        if (ctx.json) {
          yield* output.out(jsonDocument({ reply, usage: usage ?? null, rounds, report: result.report, compaction: compaction.note ?? null }))
        } else {
          if (ran.length > 0) yield* output.out(s.dim(`tools: ${ran.length} call${ran.length === 1 ? "" : "s"} in ${rounds.length - 1} round${rounds.length === 2 ? "" : "s"} (${toolCounts(ran.map((c) => c.name))})`))
          if (compaction.note !== undefined) yield* output.out(s.magenta(compaction.note))
          if (!noHud) for (const line of colourChanges(hudLines(result.report, current, { width: output.columns, maxInputTokens: ctx.config.budgets.maxInputTokens }), s)) yield* output.out(line)
        }
        return { reply, usage, promptUsage: sumUsage(rounds.map((r) => r.usage ?? undefined)), session: current } satisfies Turn
      }
    }
  })

/** `read_file x2, search` from the names of the calls, in first-use order. Pure. */
const toolCounts = (names: ReadonlyArray<string>): string => {
  const counts = new Map<string, number>()
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1)
  return [...counts].map(([n, k]) => (k === 1 ? n : `${n} x${k}`)).join(", ")
}

/**
 * The compaction hook: when history passes `budgets.compactionTokens`, the history
 * compactor (with the provider's model as detector) shrinks it in one large step, and the
 * compacted history replaces the stored one together with the tracker's purged history
 * entries, in one commit (re-run on the new state if another process committed first).
 */
const compact = (prepared: Prepared, llm: LlmClientShape, force = false) =>
  Effect.gen(function* () {
    // `/compact` forces it: any history over one token is compacted now.
    const trigger = force ? 1 : prepared.ctx.config.budgets.compactionTokens
    if (trigger <= 0) return { note: undefined as string | undefined }
    const compactorLayer = HistoryCompactor.layer({ config: { triggerTokens: trigger } }).pipe(
      Layer.provide(compactionModelLayer(prepared.ctx.config.model).pipe(Layer.provide(Layer.succeed(LlmClient, llm))))
    )
    const rewritten = yield* rewriteSessionHistory(
      prepared.state.key,
      (snapshot) =>
        Effect.gen(function* () {
          const compactor = yield* HistoryCompactor
          const result = yield* compactor.compactHistoryIfNeeded(snapshot.history)
          return { history: result.compacted ? result.history : undefined, value: result }
        }).pipe(Effect.provide(compactorLayer)),
      { purgeTracker: true, tracker: "store", retries: COMMIT_RETRIES }
    )
    const result = rewritten.value
    if (!result.compacted || rewritten.commit === undefined) return { note: undefined }
    return {
      note: `Compacted history (${result.kind}): ${formatTokens(result.tokensBefore)} -> ${formatTokens(result.tokensAfter)} tokens; ${formatTokens(result.cacheTokensRewritten)} cached tokens to write again (${formatTokens(result.cacheTokensInvalidated)} cached tokens invalidated).`
    }
  })

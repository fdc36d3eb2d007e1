/**
 * The text of `strata chat`'s slash commands that report (`/cost`, `/tokens`, `/model`,
 * `/add`, `/drop`): pure functions from the session's numbers to lines, so the loop in
 * `chat.ts` only routes and the wording is tested without a provider.
 */
import { formatTokens, type SessionRecord, type Usage } from "@strata/core/effect"
import { costOf, findModel, PROVIDER_IDS } from "@strata/providers"

/** The loop's help, one line per command. */
export const CHAT_HELP: ReadonlyArray<string> = [
  "/add PATH    put a file in context",
  "/drop PATH   take a file out of context",
  "/files       list the files in context",
  "/clear       forget the conversation (the files in context stay)",
  "/compact     compact the conversation now (summarise older turns)",
  "/model       show the provider and model",
  "/cost        money per turn of this chat and for the whole session",
  "/tokens      tokens of the next request and of the session so far",
  "/hud         show the HUD now",
  "/quit        leave (Ctrl-D works too)"
]

/** One answered prompt of this chat: its usage summed over its tool rounds. */
export interface TurnUsage {
  readonly prompt: string
  readonly usage: Usage | undefined
}

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }

/** Usages added up; undefined parts count as zero. Pure. */
export const sumUsage = (usages: ReadonlyArray<Usage | undefined>): Usage =>
  usages.reduce<Usage>(
    (a, u) => (u === undefined ? a : { input: a.input + u.input, cacheRead: a.cacheRead + u.cacheRead, cacheWrite: a.cacheWrite + u.cacheWrite, output: a.output + u.output }),
    ZERO
  )

const dollars = (n: number): string => `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`

/** The model table a provider's model is priced from: its own, or (a gateway's) the table that knows the model. */
const pricing = (provider: string, model: string) => {
  const own = PROVIDER_IDS.find((p) => p === provider)
  if (own !== undefined) return { id: own, model }
  const bare = model.replace(/^[^/]+\//, "")
  const id = PROVIDER_IDS.find((p) => findModel(p, bare) !== undefined)
  return id === undefined ? undefined : { id, model: bare }
}

const priced = (provider: string, model: string, usage: Usage): string => {
  const table = pricing(provider, model)
  const cost = table === undefined ? undefined : costOf(table.id, table.model, usage)
  return cost === undefined ? "no price in the model table" : `${dollars(cost.total)} (${dollars(cost.uncachedTotal)} without the cache)`
}

const preview = (prompt: string): string => JSON.stringify(prompt.length > 40 ? `${prompt.slice(0, 40)}...` : prompt)

/**
 * `/cost`: each prompt of this chat with its money (all its tool rounds), then the whole
 * session's from the stored totals, priced with the model table. Pure.
 */
export const costLines = (provider: string, model: string, turns: ReadonlyArray<TurnUsage>, session: SessionRecord): ReadonlyArray<string> => {
  const lines = turns.map((t, i) => (t.usage === undefined ? `turn ${i + 1} ${preview(t.prompt)}: no usage reported` : `turn ${i + 1} ${preview(t.prompt)}: ${priced(provider, model, t.usage)}`))
  return [
    ...(lines.length === 0 ? ["no turns in this chat yet"] : lines),
    `this chat: ${priced(provider, model, sumUsage(turns.map((t) => t.usage)))}`,
    `session (${session.turns.toLocaleString("en-US")} requests): ${priced(provider, model, session.totals)}`
  ]
}

/** `/tokens`: the next request's size, the last request's usage and the session's totals. Pure. */
export const tokenLines = (nextRequestTokens: number, session: SessionRecord, lastTurn: Usage | undefined): ReadonlyArray<string> => {
  const usage = (u: Usage) => `read ${formatTokens(u.cacheRead)}, write ${formatTokens(u.cacheWrite)}, uncached ${formatTokens(u.input)}, output ${formatTokens(u.output)}`
  return [
    `next request: ${formatTokens(nextRequestTokens)} tokens before your prompt`,
    ...(lastTurn === undefined ? [] : [`last turn: ${usage(lastTurn)}`]),
    `session (${session.turns.toLocaleString("en-US")} requests): ${usage(session.totals)}`
  ]
}

/** `/model`: what this chat talks to; switching is a new chat, since the cached prefix is per model. Pure. */
export const modelLines = (provider: string, model: string, asked: string): ReadonlyArray<string> =>
  asked === "" || asked === model
    ? [`${provider} ${model}`]
    : [
        `this chat talks to ${provider} ${model}; the cache is per model, so switching starts a new prefix:`,
        `leave and run \`strata chat --model ${asked}\` (the conversation continues in the same session)`
      ]

/** `/drop`'s answer: what was dropped, or why nothing was. Pure. */
export const dropLine = (path: string, selected: ReadonlyArray<string>): { readonly selected: ReadonlyArray<string>; readonly line: string } => {
  const wanted = path.replace(/^\.\//, "")
  if (!selected.includes(wanted)) {
    return { selected, line: `${wanted} is not in context; /files lists the files in context` }
  }
  return { selected: selected.filter((p) => p !== wanted), line: `dropped ${wanted} (${selected.length - 1} file${selected.length === 2 ? "" : "s"} in context)` }
}

/** `/add`'s answer once the paths were checked. Pure. */
export const addLine = (added: ReadonlyArray<string>, before: ReadonlyArray<string>, after: ReadonlyArray<string>): string => {
  const fresh = added.filter((p) => !before.includes(p))
  return fresh.length === 0
    ? `${added.join(", ")} ${added.length === 1 ? "is" : "are"} already in context`
    : `added ${fresh.join(", ")} (${after.length} file${after.length === 1 ? "" : "s"} in context)`
}

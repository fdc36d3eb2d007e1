/**
 * Scoring of replayed requests through `@strata/providers`' prompt-cache simulators:
 * one simulated cache per strategy, `none` priced with caching off, and the `oracle`
 * bound. Works on native bodies only, so a `--dump` file is re-scored by the same code
 * (`rescoreDump`) and reproduces the replay's table.
 */
import {
  computeCost,
  makeSimulator,
  ttlSpec,
  type CacheUsage,
  type ModelLimits,
  type Simulator,
  type SimulatorOptions
} from "@strata/providers"
import { makeTokenCounter } from "@strata/core"
import { STRATEGIES, type ReplayProvider, type StrategyName } from "./strategies.ts"

/** One scored request. */
export interface RequestScore {
  readonly t: number
  readonly strategy: StrategyName
  /** Every input token of the request. */
  readonly promptTokens: number
  /** Tokens billed at the base input price (neither read nor written). */
  readonly uncached: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** Input cost in base-input tokens: uncached x1 + writes x write multiplier + reads x read multiplier. */
  readonly equivalentTokens: number
  /** Input cost in USD from the dated price table; undefined when the model has no price. */
  readonly usd: number | undefined
}

/** One strategy's totals over a replay. */
export interface StrategyRow {
  readonly strategy: StrategyName
  readonly requests: number
  readonly inputTokens: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly uncached: number
  /** cacheRead / inputTokens. */
  readonly hitRate: number
  readonly equivalentTokens: number
  readonly usd: number | undefined
  /** Cost relative to `none` (USD when priced, else equivalent tokens). */
  readonly vsNone: number | undefined
  /** Cost relative to `oracle`. */
  readonly vsOracle: number | undefined
}

export interface ScorerOptions {
  readonly provider: ReplayProvider
  readonly model: string
  /** Token counter for the simulators and the oracle (default: the simulators' chars/4). */
  readonly countTokens?: ((text: string) => number) | undefined
}

/** Every text of a native body (Anthropic, Bedrock, OpenAI and Gemini all name it `text`), in order. */
export const textsOf = (body: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v)
    } else if (typeof value === "object" && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        if (key === "text" && typeof v === "string") out.push(v)
        else walk(v)
      }
    }
  }
  walk(body)
  return out
}

const multiset = (texts: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1)
  return counts
}

const usdOf = (usage: CacheUsage, limits: ModelLimits): number | undefined => {
  const cost = computeCost(usage, limits)
  return cost === undefined ? undefined : cost.total - cost.output
}

/** Scores requests strategy by strategy, in the order they were sent. */
export interface Scorer {
  readonly score: (strategy: StrategyName, body: unknown, t: number) => RequestScore
  readonly limits: ModelLimits
}

/**
 * A scorer for one provider and model.
 *
 * - Every strategy but `none` and `oracle` sends its bodies, in order, to its own
 *   simulator (one cache per strategy, as separate sessions would have).
 * - `none` is priced with caching off: every input token at the base price.
 * - `oracle`: a text block whose exact text was in the previous oracle request is a
 *   cache read, every other block a cache write (TTLs, minimums and breakpoint limits
 *   ignored). With the oracle layout (one block per item) this is "every unchanged
 *   token read, every changed token written".
 *
 * @example
 * ```ts
 * const scorer = makeScorer({ provider: "anthropic", model: "claude-sonnet-4-5" })
 * scorer.score("segments", body, 90).cacheRead
 * ```
 */
export const makeScorer = (options: ScorerOptions): Scorer => {
  const simOptions: SimulatorOptions = options.countTokens === undefined
    ? { model: options.model }
    : { model: options.model, countTokens: options.countTokens }
  const sims = new Map<StrategyName, Simulator>()
  const simFor = (strategy: StrategyName): Simulator => {
    let sim = sims.get(strategy)
    if (sim === undefined) {
      sim = makeSimulator(options.provider, simOptions) as Simulator
      sims.set(strategy, sim)
    }
    return sim
  }
  const cold = makeSimulator(options.provider, simOptions) as Simulator
  const limits = cold.limits
  const spec = ttlSpec(limits)
  const count = options.countTokens ?? ((text: string) => Math.ceil(text.length / 4))
  const tokenMemo = new Map<string, number>()
  const tokens = (text: string): number => {
    let n = tokenMemo.get(text)
    if (n === undefined) {
      n = text.length === 0 ? 0 : count(text)
      tokenMemo.set(text, n)
    }
    return n
  }
  let oraclePrevious = new Map<string, number>()

  const fromUsage = (strategy: StrategyName, t: number, usage: CacheUsage, equivalentTokens: number): RequestScore => ({
    t,
    strategy,
    promptTokens: usage.input + usage.cacheRead + usage.cacheWrite,
    uncached: usage.input,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    equivalentTokens,
    usd: usdOf(usage, limits)
  })

  return {
    limits,
    score: (strategy, body, t) => {
      if (strategy === "none") {
        cold.reset()
        const prompt = cold.send(body, t).trace.promptTokens
        return fromUsage(strategy, t, { input: prompt, cacheRead: 0, cacheWrite: 0, output: 0 }, prompt)
      }
      if (strategy === "oracle") {
        const now = multiset(textsOf(body))
        let read = 0
        let written = 0
        for (const [text, n] of now) {
          const reused = Math.min(n, oraclePrevious.get(text) ?? 0)
          read += reused * tokens(text)
          written += (n - reused) * tokens(text)
        }
        oraclePrevious = now
        return fromUsage(strategy, t, { input: 0, cacheRead: read, cacheWrite: written, output: 0 }, read * spec.read + written * spec.write)
      }
      const r = simFor(strategy).send(body, t)
      return fromUsage(strategy, t, { ...r.usage, output: 0 }, r.cost.inputEquivalentTokens)
    }
  }
}

/** Totals per strategy, in table order, with costs relative to `none` and `oracle`. */
export const summarize = (scores: ReadonlyArray<RequestScore>): ReadonlyArray<StrategyRow> => {
  const by = new Map<StrategyName, Array<RequestScore>>()
  for (const s of scores) {
    const list = by.get(s.strategy) ?? []
    list.push(s)
    by.set(s.strategy, list)
  }
  const priced = scores.length > 0 && scores.every((s) => s.usd !== undefined)
  const costOf = (list: ReadonlyArray<RequestScore> | undefined): number | undefined =>
    list === undefined ? undefined : list.reduce((sum, s) => sum + (priced ? (s.usd ?? 0) : s.equivalentTokens), 0)
  const none = costOf(by.get("none"))
  const oracle = costOf(by.get("oracle"))
  const ratio = (a: number, b: number | undefined) => (b === undefined || b === 0 ? undefined : a / b)
  return STRATEGIES.flatMap((strategy): ReadonlyArray<StrategyRow> => {
    const list = by.get(strategy)
    if (list === undefined) return []
    const sum = (f: (s: RequestScore) => number) => list.reduce((acc, s) => acc + f(s), 0)
    const inputTokens = sum((s) => s.promptTokens)
    const cacheRead = sum((s) => s.cacheRead)
    const cost = costOf(list) ?? 0
    return [{
      strategy,
      requests: list.length,
      inputTokens,
      cacheRead,
      cacheWrite: sum((s) => s.cacheWrite),
      uncached: sum((s) => s.uncached),
      hitRate: inputTokens === 0 ? 0 : cacheRead / inputTokens,
      equivalentTokens: sum((s) => s.equivalentTokens),
      usd: priced ? sum((s) => s.usd ?? 0) : undefined,
      vsNone: ratio(cost, none),
      vsOracle: ratio(cost, oracle)
    }]
  })
}

/** One line of a `--dump` file. */
export interface DumpLine {
  readonly t: number
  readonly strategy: StrategyName
  readonly request: unknown
}

/** A dump line: `{"t": seconds, "strategy": name, "request": <native body>}`. */
export const dumpLine = (t: number, strategy: StrategyName, request: unknown): string => JSON.stringify({ t, strategy, request })

const isStrategy = (s: unknown): s is StrategyName => typeof s === "string" && (STRATEGIES as ReadonlyArray<string>).includes(s)

/** Parse a dump file's text; throws with the line number on a malformed line. */
export const parseDump = (text: string): ReadonlyArray<DumpLine> =>
  text.split("\n").flatMap((line, i): ReadonlyArray<DumpLine> => {
    if (line.trim() === "") return []
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      throw new Error(`dump line ${i + 1} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    }
    const v = value as Partial<DumpLine> | null
    if (v === null || typeof v.t !== "number" || !isStrategy(v.strategy) || v.request === undefined) {
      throw new Error(`dump line ${i + 1} is not {"t": number, "strategy": name, "request": body}`)
    }
    return [{ t: v.t, strategy: v.strategy, request: v.request }]
  })

/**
 * Re-score a `--dump` file: every request through the same simulators, in file order.
 * With the replay's provider and model (and, by default, the model's token counter, as
 * the replay uses) it gives the replay's table exactly.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * const { rows } = await rescoreDump(readFileSync("replay.jsonl", "utf8"), { provider: "anthropic", model: "claude-sonnet-4-5" })
 * ```
 */
export const rescoreDump = async (
  text: string,
  options: ScorerOptions
): Promise<{ readonly scores: ReadonlyArray<RequestScore>; readonly rows: ReadonlyArray<StrategyRow> }> => {
  const countTokens = options.countTokens ?? (await makeTokenCounter(options.model)).count
  const scorer = makeScorer({ ...options, countTokens })
  const scores = parseDump(text).map((line) => scorer.score(line.strategy, line.request, line.t))
  return { scores, rows: summarize(scores) }
}

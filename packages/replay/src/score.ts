/**
 * Scoring of replayed requests through `@strata/providers`' prompt-cache simulators:
 * one simulated cache per strategy, `none` priced with caching off, and the `oracle`
 * row priced by the content bound (`bound.ts`) over the oracle layout's blocks; every
 * strategy also gets the content bound over its own requests' blocks (its "own bound").
 * Works on native bodies only, so a `--dump` file is re-scored by the same code
 * (`rescoreDump`) and reproduces the replay's table.
 */
import {
  computeCost,
  makeSimulator,
  promptBlocks,
  ttlSpec,
  type ModelLimits,
  type Simulator,
  type SimulatorOptions
} from "@strata/providers"
import { estimateTokens, makeTokenCounter, type Usage } from "@strata/core"
import { Result, Schema } from "effect"
import { contentBound, type BoundPricing, type BoundRequest, type BoundUsage } from "./bound.ts"
import { STRATEGIES, type ReplayProvider, type StrategyCounts, type StrategyName } from "./strategies.ts"
import { syntheticTurnsOf } from "./synthetic.ts"

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
  /** Tokens of superseded copies the request carries (see `StrategyCounts`). */
  readonly supersededTokens: number
  /** Tokens context editing cleared from the request (see `StrategyCounts`). */
  readonly clearedTokens: number
  /** Synthetic assistant messages the request carries (context acknowledgements such as "Ok.", `syntheticTurnsOf`). */
  readonly syntheticMessages: number
  /** Tokens of their text. */
  readonly syntheticTokens: number
  /**
   * The content bound over this strategy's own requests, for this request, in base-input
   * tokens and in USD (undefined without a price): the least any cache could charge for
   * exactly the blocks this strategy sent. The oracle's equals its cost.
   */
  readonly ownBoundTokens: number
  readonly ownBoundUsd: number | undefined
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
  /**
   * Cost relative to the `oracle` row: the content bound, the least any cache could
   * charge for the session's content as the oracle sends it. A strategy that sends less
   * content (symbol diffs, cleared tool results) can go under 1.
   */
  readonly vsOracle: number | undefined
  /** The content bound over this strategy's own requests (USD when priced, else equivalent tokens). */
  readonly ownBound: number
  /**
   * Cost relative to `ownBound`: how close the strategy's caching came to the best cache
   * for the content it chose to send. The fair comparison for strategies that send less
   * than the oracle; at least 1 where a cache reads whole blocks only (Anthropic, Bedrock).
   */
  readonly vsOwnBound: number | undefined
  /** Superseded tokens carried, summed over requests. */
  readonly supersededTokens: number
  /** Tokens cleared by context editing, summed over requests. */
  readonly clearedTokens: number
  /** Synthetic assistant messages (context acknowledgements such as "Ok."), summed over requests. */
  readonly syntheticMessages: number
  /** Tokens of their text, summed over requests. */
  readonly syntheticTokens: number
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

const usdOf = (usage: Usage, limits: ModelLimits): number | undefined => {
  const cost = computeCost(usage, limits)
  return cost === undefined ? undefined : cost.total - cost.output
}

/**
 * Seconds from a request's send until what it wrote can be read, in the simulators and
 * the bound alike (the simulators' default).
 */
export const FIRST_TOKEN_SECONDS = 1

/**
 * The bound's prices and lifetimes for a model: every lifetime a request body can ask
 * for (not Gemini's explicit `cachedContents`, created by a separate call and billed
 * for storage), a lifetime capped where the provider caps it, reads at the price the
 * simulators bill them, and the long-context input price where the model has one.
 */
export const boundPricing = (limits: ModelLimits): BoundPricing => {
  const ttls = limits.ttls
    .filter((t) => t.storagePerMTokHour === undefined)
    .map((t) => ({ name: t.name, seconds: Math.min(t.seconds, t.maxSeconds ?? Infinity), write: t.write }))
  const price = limits.price
  const long = price?.longContext
  return {
    ttls: ttls.length > 0 ? ttls : [{ name: ttlSpec(limits).name, seconds: ttlSpec(limits).seconds, write: ttlSpec(limits).write }],
    read: ttlSpec(limits).read,
    visibleAfter: FIRST_TOKEN_SECONDS,
    rate: price === undefined || long === undefined
      ? undefined
      : (tokens) => (tokens > long.thresholdTokens ? long.inputPerMTok / price.inputPerMTok : 1)
  }
}

type Counts = { readonly supersededTokens: number; readonly clearedTokens: number; readonly syntheticMessages: number; readonly syntheticTokens: number }

/** Scores requests strategy by strategy, in the order they were sent. */
export interface Scorer {
  /**
   * Score the next request. Simulated strategies are scored as they come; `oracle`
   * requests are recorded, and priced by `scores` once the whole session is known (the
   * bound needs to know which blocks later requests reuse).
   */
  readonly send: (strategy: StrategyName, body: unknown, t: number, counts?: StrategyCounts) => void
  /** Every request's score so far, in send order. */
  readonly scores: () => ReadonlyArray<RequestScore>
  readonly limits: ModelLimits
}

/**
 * A scorer for one provider and model.
 *
 * - Every strategy but `none` and `oracle` sends its bodies, in order, to its own
 *   simulator (one cache per strategy, as separate sessions would have).
 * - `none` is priced with caching off: every input token at the base price.
 * - `oracle` is priced by the content bound (`contentBound`) over its bodies' blocks,
 *   as the simulator measures them: per block, the cheapest of sending it uncached,
 *   writing it for a later request, or reading it back while its entry lives.
 * - Every strategy's own bound is the same computation over its own bodies' blocks
 *   (`ownBoundTokens`, `ownBoundUsd`).
 *
 * @example
 * ```ts
 * import { makeScorer } from "@strata/replay"
 * const scorer = makeScorer({ provider: "anthropic", model: "claude-sonnet-4-6" })
 * const body = { model: "claude-sonnet-4-6", max_tokens: 1024, system: [{ type: "text", text: "You review TypeScript. ".repeat(400), cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: "Hi" }] }
 * scorer.send("segments", body, 0)
 * scorer.send("segments", body, 90)
 * scorer.scores().map((s) => s.cacheRead > 0) // [false, true]
 * ```
 */
export const makeScorer = (options: ScorerOptions): Scorer => {
  const simOptions: SimulatorOptions = options.countTokens === undefined
    ? { model: options.model, firstTokenSeconds: FIRST_TOKEN_SECONDS }
    : { model: options.model, firstTokenSeconds: FIRST_TOKEN_SECONDS, countTokens: options.countTokens }
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
  // The simulators' count when none is given.
  const countText = options.countTokens ?? estimateTokens
  const limits = cold.limits
  const pricing = boundPricing(limits)
  const price = limits.price
  // Scores in send order, each with its place among its strategy's requests (for the
  // bounds, priced by `scores` once the session is known); an oracle request holds its
  // place until then.
  const sent: Array<{ readonly strategy: StrategyName; readonly k: number; readonly score: Omit<RequestScore, "ownBoundTokens" | "ownBoundUsd"> | { readonly counts: Counts } }> = []
  const own = new Map<StrategyName, Array<BoundRequest>>()
  let priced: { readonly upTo: number; readonly scores: ReadonlyArray<RequestScore> } | undefined
  const boundUsd = (b: BoundUsage): number | undefined =>
    // The bound's own long-context decision (on the tokens the request must carry), not computeCost's.
    price === undefined ? undefined : (b.equivalentTokens * b.rate * price.inputPerMTok) / 1_000_000
  const record = (strategy: StrategyName, body: unknown, t: number): number => {
    const list = own.get(strategy) ?? []
    own.set(strategy, list)
    list.push({ t, items: promptBlocks(options.provider, body, simOptions).filter((b) => b.tokens > 0) })
    return list.length - 1
  }

  const fromUsage = (strategy: StrategyName, t: number, usage: Usage, equivalentTokens: number, counts: Counts): Omit<RequestScore, "ownBoundTokens" | "ownBoundUsd"> => ({
    t,
    strategy,
    promptTokens: usage.input + usage.cacheRead + usage.cacheWrite,
    uncached: usage.input,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    equivalentTokens,
    usd: usdOf(usage, limits),
    supersededTokens: counts.supersededTokens,
    clearedTokens: counts.clearedTokens,
    syntheticMessages: counts.syntheticMessages,
    syntheticTokens: counts.syntheticTokens
  })

  return {
    limits,
    send: (strategy, body, t, counts) => {
      const synthetic = syntheticTurnsOf(body, countText)
      const known = { supersededTokens: counts?.supersededTokens ?? 0, clearedTokens: counts?.clearedTokens ?? 0, syntheticMessages: synthetic.messages, syntheticTokens: synthetic.tokens }
      const k = record(strategy, body, t)
      if (strategy === "oracle") {
        sent.push({ strategy, k, score: { counts: known } })
        return
      }
      if (strategy === "none") {
        cold.reset()
        const prompt = cold.send(body, t).trace.promptTokens
        sent.push({ strategy, k, score: fromUsage(strategy, t, { input: prompt, cacheRead: 0, cacheWrite: 0, output: 0 }, prompt, known) })
        return
      }
      const r = simFor(strategy).send(body, t)
      sent.push({ strategy, k, score: fromUsage(strategy, t, { ...r.usage, output: 0 }, r.cost.inputEquivalentTokens, known) })
    },
    scores: () => {
      if (priced?.upTo === sent.length) return priced.scores
      const bounds = new Map([...own].map(([strategy, requests]) => [strategy, contentBound(requests, pricing)] as const))
      const scores = sent.map(({ strategy, k, score }): RequestScore => {
        const b = bounds.get(strategy)![k]!
        const ownBound = { ownBoundTokens: b.equivalentTokens, ownBoundUsd: boundUsd(b) }
        if (!("counts" in score)) return { ...score, ...ownBound }
        const request = own.get(strategy)![k]!
        return {
          t: request.t,
          strategy: "oracle",
          promptTokens: b.promptTokens,
          uncached: b.uncached,
          cacheRead: b.cacheRead,
          cacheWrite: b.cacheWrite,
          equivalentTokens: b.equivalentTokens,
          usd: ownBound.ownBoundUsd,
          supersededTokens: score.counts.supersededTokens,
          clearedTokens: score.counts.clearedTokens,
          syntheticMessages: score.counts.syntheticMessages,
          syntheticTokens: score.counts.syntheticTokens,
          ...ownBound
        }
      })
      priced = { upTo: sent.length, scores }
      return scores
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
  const ownBoundOf = (list: ReadonlyArray<RequestScore>): number => list.reduce((sum, s) => sum + (priced ? (s.ownBoundUsd ?? 0) : s.ownBoundTokens), 0)
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
    const ownBound = ownBoundOf(list)
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
      vsOracle: ratio(cost, oracle),
      ownBound,
      vsOwnBound: ratio(cost, ownBound),
      supersededTokens: sum((s) => s.supersededTokens),
      clearedTokens: sum((s) => s.clearedTokens),
      syntheticMessages: sum((s) => s.syntheticMessages),
      syntheticTokens: sum((s) => s.syntheticTokens)
    }]
  })
}

/** One line of a `--dump` file: the send time, the strategy, the native body and what the strategy counted. */
export const DumpLine = Schema.Struct({
  t: Schema.Finite,
  strategy: Schema.Literals(STRATEGIES),
  request: Schema.Unknown,
  supersededTokens: Schema.optionalKey(Schema.Finite),
  clearedTokens: Schema.optionalKey(Schema.Finite)
})
export type DumpLine = typeof DumpLine.Type

/**
 * A dump line: `{"t": seconds, "strategy": name, "request": <native body>}`, with
 * `supersededTokens` and `clearedTokens` when the strategy counted any.
 */
export const dumpLine = (t: number, strategy: StrategyName, request: unknown, counts: StrategyCounts = {}): string =>
  JSON.stringify({
    t,
    strategy,
    request,
    ...(counts.supersededTokens ? { supersededTokens: counts.supersededTokens } : {}),
    ...(counts.clearedTokens ? { clearedTokens: counts.clearedTokens } : {})
  })

const decodeDumpLine = Schema.decodeUnknownResult(DumpLine)

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
    const decoded = decodeDumpLine(value)
    if (Result.isFailure(decoded) || decoded.success.request === undefined) {
      throw new Error(`dump line ${i + 1} is not {"t": number, "strategy": name, "request": body}`)
    }
    return [decoded.success]
  })

/**
 * Re-score a `--dump` file: every request through the same simulators, in file order.
 * With the replay's provider and model (and, by default, the model's token counter, as
 * the replay uses) it gives the replay's table exactly.
 *
 * @example
 * ```ts no-run
 * import { readFileSync } from "node:fs"
 * import { rescoreDump } from "@strata/replay"
 * const { rows } = await rescoreDump(readFileSync("replay.jsonl", "utf8"), { provider: "anthropic", model: "claude-sonnet-4-6" })
 * ```
 */
export const rescoreDump = async (
  text: string,
  options: ScorerOptions
): Promise<{ readonly scores: ReadonlyArray<RequestScore>; readonly rows: ReadonlyArray<StrategyRow> }> => {
  const countTokens = options.countTokens ?? (await makeTokenCounter(options.model)).count
  const scorer = makeScorer({ ...options, countTokens })
  for (const line of parseDump(text)) scorer.send(line.strategy, line.request, line.t, line)
  const scores = scorer.scores()
  return { scores, rows: summarize(scores) }
}

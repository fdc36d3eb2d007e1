/**
 * The proxy server. The streaming path is plain `node:http`: a reply is piped to the client
 * chunk by chunk with the socket's backpressure, and the usage is read from the chunks as
 * they pass (`internal/tap.ts`). Effect's HTTP server would put its own body and stream
 * abstractions between the two sockets on the hot path; the overhead targets (bench/proxy)
 * are measured on this path. Effect runs the state store (`StateStore`, through a
 * `ManagedRuntime`), off the time-to-first-byte path: a session is loaded before the request
 * is forwarded only when this process has not seen it. A planned request's session state is
 * kept in memory at once (`internal/heads.ts`), so the next request of the session plans from
 * it; the as-sent simulator and the store commit run after the reply ends, in a queue that
 * gives way to the requests being read and planned (`internal/idle.ts`).
 */
import { appendFile, mkdir } from "node:fs/promises"
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { AddressInfo, Socket } from "node:net"
import { join } from "node:path"
import { Effect, ManagedRuntime, Schema, type Layer } from "effect"
import { StateStore, type Usage } from "@strata/core"
import { retryOnConflict } from "@strata/core/effect"
import { computeCost, lookupModel } from "@strata/providers"
import { storeLayer } from "@strata/store"
import { emptyTotals, ExchangeRecord, MAX_EXCHANGES, SessionHeader, SessionRecord, type ExchangeUsage } from "./record.ts"
import { chainOfParsed, parseBody, spliceBody } from "./internal/body.ts"
import { chainOf, commonPrefix, resolveSession } from "./internal/sessions.ts"
import { makeAsSentSimulators, proxyRequestSummary } from "./internal/requestSummary.ts"
import { makeBodyPool, POOLED_MIN_BYTES } from "./internal/bodyPool.ts"
import { makeTap, type Tapped } from "./internal/tap.ts"
import { makeHeads, nextPlanState, type PlanState } from "./internal/heads.ts"
import { makeIdleQueue, nextTurn } from "./internal/idle.ts"
import { anthropicBlockCount, transformRequest, type Protocol, type ProxyMode, type SessionLedger } from "./transform.ts"

/** The providers' public endpoints. */
export const DEFAULT_UPSTREAMS = { anthropic: "https://api.anthropic.com", openai: "https://api.openai.com" } as const

/** The repository part of the proxy's session keys in the state store. */
export const PROXY_REPOSITORY = "strata-proxy"

export interface ProxyOptions {
  /** Default `127.0.0.1`. Anything else is reachable from other hosts: a warning is printed. */
  readonly host?: string | undefined
  /** Default 8787; 0 picks a free port. */
  readonly port?: number | undefined
  /** Every provider path to this base URL (tests, gateways); overrides the two below. */
  readonly upstream?: string | undefined
  readonly anthropicUpstream?: string | undefined
  readonly openaiUpstream?: string | undefined
  /** Default `cache`. */
  readonly mode?: ProxyMode | undefined
  /** Write each session's requests as a recorded transcript (`<dir>/<session>.jsonl`). */
  readonly recordDir?: string | undefined
  /** The state store: a `STRATA_STORE` setting (`file`, `memory`, `postgres://...`) or a layer. Default: `file`. */
  readonly store?: string | Layer.Layer<StateStore, unknown> | undefined
  /** Where the file store keeps `.strata/state`. Default: the working directory. */
  readonly stateRoot?: string | undefined
  /** One line per request and per problem. Default: nothing. */
  readonly log?: ((line: ProxyLogLine) => void) | undefined
  /**
   * Serves paths before the proxy does (a dashboard at `/`): return true when it answered.
   * It never sees a provider path (`/v1/...`).
   */
  readonly handler?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined
  /**
   * Called with every provider request the proxy read: the bytes the client sent and the
   * bytes it forwarded (identical when it changed nothing). For tests and dashboards; the
   * headers (and so the key) are not passed.
   */
  readonly onForward?: ((exchange: { readonly protocol: Protocol; readonly sent: Buffer; readonly forwarded: Buffer }) => void) | undefined
  /** The clock, in Unix seconds (tests). */
  readonly now?: (() => number) | undefined
  /**
   * Sessions whose state is kept in memory, the latest used (default 256): their records
   * and their as-sent simulators. An older session's record is loaded from the store when
   * it sends again (nothing is lost; its as-sent figures start a cold simulator), so a
   * long-running proxy's memory does not grow with every session it has ever seen.
   */
  readonly maxSessionsInMemory?: number | undefined
}

/** What the proxy reports: one exchange, or a notice (fail-open, a cut, a warning). */
export type ProxyLogLine =
  | { readonly kind: "exchange"; readonly session: string; readonly exchange: ExchangeRecord; readonly hitRate: number | undefined }
  | { readonly kind: "notice"; readonly message: string }

export interface ProxyServer {
  readonly url: string
  readonly port: number
  /** The sessions this process keeps in memory (`maxSessionsInMemory`), latest first; the store has them all. */
  readonly sessions: () => ReadonlyArray<SessionRecord>
  /**
   * Reply bytes the proxy holds right now, over the replies in flight: what its client
   * sockets have queued (`writableLength`) and what it read from upstream and has not
   * passed on (`readableLength`). Backpressure keeps this near the streams' high-water
   * marks however slowly a client reads.
   */
  readonly buffered: () => { readonly writable: number; readonly readable: number; readonly replies: number }
  /**
   * Resolves once the record of every reply that has ended is committed (the commits run
   * after the replies, off the request path). For tests and dashboards.
   */
  readonly settled: () => Promise<void>
  /** Stop accepting, let the streams in flight finish, commit, release the store. */
  readonly close: () => Promise<void>
}

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"])
/** A request body larger than this is forwarded as it is, unread. */
const MAX_PLANNED_BODY = 64 * 1024 * 1024

const protocolOf = (method: string, path: string): Protocol | undefined => {
  if (method !== "POST") return undefined
  const p = path.split("?")[0]!.replace(/\/+$/, "")
  if (p.endsWith("/v1/messages")) return "anthropic"
  if (p.endsWith("/v1/responses")) return "openai-responses"
  if (p.endsWith("/v1/chat/completions")) return "openai-chat"
  return undefined
}

const isLoopback = (host: string): boolean => host === "127.0.0.1" || host === "::1" || host === "localhost" || host.startsWith("127.")

const decodeRecord = Schema.decodeUnknownSync(SessionRecord)
const encodeHeader = Schema.encodeSync(SessionHeader)
const encodeExchange = Schema.encodeSync(ExchangeRecord)

/**
 * The record as the store keeps it (`SessionRecord`'s encoding), without encoding the
 * exchanges of `before` again: they were encoded (or decoded) when they were stored.
 */
const encodeRecord = (record: SessionRecord, fresh: ExchangeRecord): Schema.Json => {
  const { exchanges, ...header } = record
  return { ...encodeHeader(header), exchanges: exchanges.map((e) => (e === fresh ? encodeExchange(e) : e)) }
}

const toExchangeUsage = (u: Usage): ExchangeUsage => {
  const write1h = u.cacheWriteByTtl?.["1h"] ?? 0
  return { input: u.input, cacheRead: u.cacheRead, write5m: Math.max(0, u.cacheWrite - write1h), write1h, output: u.output }
}

interface Planned {
  readonly protocol: Protocol
  readonly original: Json
  /** The bytes to forward, in pieces (the client's bytes where the transform changed nothing). */
  readonly pieces: ReadonlyArray<Buffer>
  readonly chain: ReadonlyArray<string>
  readonly session: string
  readonly parent: string | undefined
  readonly changed: ReadonlyArray<string>
  readonly ttl: string | undefined
  readonly ledger: SessionLedger
  readonly blocks: number
  readonly model: string
  readonly at: number
  /** Settle the session's in-memory head (`internal/heads.ts`). */
  readonly settle: (outcome: "committed" | "dropped") => void
}

/**
 * Start the proxy. Resolves once it listens.
 *
 * @example
 * ```ts no-run
 * import { startProxy } from "@strata/proxy"
 * const proxy = await startProxy({ port: 0, log: (line) => console.log(line) })
 * // ANTHROPIC_BASE_URL=<proxy.url> claude ...
 * await proxy.close()
 * ```
 */
export const startProxy = async (options: ProxyOptions = {}): Promise<ProxyServer> => {
  const host = options.host ?? "127.0.0.1"
  const mode = options.mode ?? "cache"
  const now = options.now ?? (() => Date.now() / 1000)
  const log = options.log ?? (() => {})
  const notice = (message: string) => log({ kind: "notice", message })
  const upstreams = {
    anthropic: new URL(options.upstream ?? options.anthropicUpstream ?? DEFAULT_UPSTREAMS.anthropic),
    openai: new URL(options.upstream ?? options.openaiUpstream ?? DEFAULT_UPSTREAMS.openai)
  }
  for (const u of Object.values(upstreams)) {
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`upstream ${u.origin} is not an http(s) URL`)
  }
  const layer = options.store === undefined || typeof options.store === "string"
    ? storeLayer(options.store ?? "file", { repoRoot: options.stateRoot ?? process.cwd() })
    : options.store
  const runtime = ManagedRuntime.make(layer)
  const store = await runtime.runPromise(Effect.gen(function* () {
    return yield* StateStore
  }))

  // The sessions this process knows, with the store version they were read or written at:
  // the latest used first out of the map's order, the oldest dropped past the bound (the
  // store keeps every record; a dropped one is loaded again when its session sends).
  const maxKnown = Math.max(1, options.maxSessionsInMemory ?? 256)
  const known = new Map<string, { version: number; record: SessionRecord }>()
  const remember = (id: string, entry: { version: number; record: SessionRecord }) => {
    known.delete(id)
    known.set(id, entry)
    if (known.size > maxKnown) known.delete(known.keys().next().value ?? id)
  }
  const keyOf = (id: string) => ({ repository: PROXY_REPOSITORY, name: id })
  const loadSession = async (id: string): Promise<SessionRecord | undefined> => {
    const cached = known.get(id)
    if (cached !== undefined) {
      remember(id, cached)
      return cached.record
    }
    const { snapshot } = await runtime.runPromise(store.load(keyOf(id)))
    if (snapshot.record === null) return undefined
    const record = decodeRecord(snapshot.record)
    remember(id, { version: snapshot.version, record })
    return record
  }
  /**
   * The committed record to plan from: what this process knows while the store's version
   * says nobody else committed since (another proxy process on the same store: its
   * requests' gaps, block counts and clearings are this request's to keep), else loaded.
   */
  const loadCurrent = async (id: string): Promise<SessionRecord | undefined> => {
    const cached = known.get(id)
    if (cached !== undefined && (await runtime.runPromise(store.version(keyOf(id)))) !== cached.version) known.delete(id)
    return loadSession(id)
  }

  // What the next request of a session plans from: its latest planned state (requests of
  // this process not yet committed), else its committed record.
  const heads = makeHeads()
  const loadPlanState = async (id: string): Promise<PlanState | undefined> => heads.get(id) ?? (await loadCurrent(id))
  const idle = makeIdleQueue()

  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }
  const asSentSims = makeAsSentSimulators(maxKnown)
  const pool = makeBodyPool()
  const inFlight = new Set<Promise<void>>()
  // Replies being piped (client response, upstream response), for `buffered()`.
  const piping = new Set<{ readonly res: ServerResponse; readonly ur: IncomingMessage }>()
  const track = (p: Promise<void>) => {
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p))
  }

  const plan = async (protocol: Protocol, bytes: Buffer): Promise<Planned | string> => {
    // The bytes read in place (internal/body.ts); JSON.parse for what that reader leaves.
    const parsed = parseBody(bytes)
    let body: unknown
    if (parsed !== undefined) body = parsed.value
    else {
      try {
        body = JSON.parse(bytes.toString("utf8"))
      } catch {
        return "the body is not JSON: forwarded as sent"
      }
    }
    if (!isRecord(body)) return "the body is not a JSON object: forwarded as sent"
    const at = now()
    const chain = (parsed === undefined ? undefined : chainOfParsed(protocol, parsed)) ?? chainOf(protocol, body)
    const resolved = await resolveSession(chain, loadPlanState)
    const gaps = resolved.found === undefined ? [] : [...resolved.found.gaps, Math.max(0, at - resolved.found.lastAt)]
    const out = transformRequest({
      protocol,
      mode,
      body,
      session: { id: resolved.id, gaps, lastBlocks: resolved.found?.lastBlocks ?? 0, ledger: resolved.found?.ledger }
    })
    const model = typeof body["model"] === "string" ? body["model"] : ""
    const pieces = out.body === body ? [bytes] : ((parsed === undefined ? undefined : spliceBody(parsed, out.body)) ?? [Buffer.from(JSON.stringify(out.body), "utf8")])
    const blocks = protocol === "anthropic" ? anthropicBlockCount(body) : 0
    const settle = heads.advance(resolved.id, resolved.found, nextPlanState(resolved.found, { chain, at, blocks, ledger: out.ledger }))
    return {
      protocol,
      original: body,
      pieces,
      chain,
      session: resolved.id,
      parent: resolved.parent,
      changed: out.changed,
      ttl: out.ttl,
      ledger: out.ledger,
      blocks,
      model,
      at,
      settle
    }
  }

  const missOf = (before: SessionRecord | undefined, p: Planned, usage: ExchangeUsage, diagnosis: string | undefined): string | undefined => {
    if (before === undefined) return diagnosis
    const prompt = usage.input + usage.cacheRead + usage.write5m + usage.write1h
    if (usage.cacheRead >= Math.min(before.lastPrompt, prompt) * 0.5) return diagnosis
    const gap = Math.round(p.at - before.lastAt)
    const shared = commonPrefix(before.chain, p.chain)
    const why = before.model !== p.model
      ? `the model changed (${before.model} -> ${p.model})`
      : shared < before.chain.length && shared < p.chain.length
        ? `the conversation changed at message ${shared}`
        : gap > 300 && (before.exchanges.at(-1)?.ttl ?? "5m") !== "1h"
          ? `${gap} s since the previous request: past the 5m lifetime`
          : gap > 3600
            ? `${gap} s since the previous request: past the 1h lifetime`
            : "the prefix before the messages (system or tools) changed, or the provider evicted the entry"
    return diagnosis === undefined ? why : `${why}; ${diagnosis}`
  }

  const nextRecord = (before: SessionRecord | undefined, p: Planned, exchange: ExchangeRecord): SessionRecord => {
    const u = exchange.usage
    const totals = before?.totals ?? emptyTotals
    // The same rule as the in-memory head the next request planned from. A request the
    // provider refused is recorded, but the session's state stays where it was (see
    // `advancesSession`): a new session keeps only its chain, to be found again.
    const state = advancesSession(exchange.status)
      ? nextPlanState(before, p)
      : (before ?? { chain: p.chain, gaps: [], lastAt: p.at, lastBlocks: 0, ledger: undefined })
    return {
      kind: "strata-proxy-session",
      id: p.session,
      protocol: p.protocol,
      model: p.model,
      ...(p.parent === undefined ? (before?.parent === undefined ? {} : { parent: before.parent }) : { parent: p.parent }),
      startedAt: before?.startedAt ?? p.at,
      lastAt: state.lastAt,
      chain: state.chain,
      lastBlocks: state.lastBlocks,
      lastPrompt: u === undefined ? (before?.lastPrompt ?? 0) : u.input + u.cacheRead + u.write5m + u.write1h,
      gaps: state.gaps,
      ...(state.ledger === undefined ? {} : { ledger: state.ledger }),
      totals: {
        requests: totals.requests + 1,
        input: totals.input + (u?.input ?? 0),
        cacheRead: totals.cacheRead + (u?.cacheRead ?? 0),
        write5m: totals.write5m + (u?.write5m ?? 0),
        write1h: totals.write1h + (u?.write1h ?? 0),
        output: totals.output + (u?.output ?? 0),
        costUsd: totals.costUsd + (exchange.costUsd ?? 0)
      },
      exchanges: [...(before?.exchanges ?? []), exchange].slice(-MAX_EXCHANGES)
    }
  }

  /**
   * One atomic commit per request (core's compare-and-set). On a conflict (another
   * process committed to the session first) the session is resolved and loaded again and
   * the record rebuilt from it, at most 5 times.
   */
  const commit = (
    p: Planned,
    build: (before: SessionRecord | undefined) => ExchangeRecord,
    turnId: string,
    summary: (exchange: ExchangeRecord) => Schema.Json
  ): Promise<{ exchange: ExchangeRecord; id: string }> => {
    let stale: string | undefined
    return runtime.runPromise(retryOnConflict((retry) => Effect.gen(function* () {
      // What this process knew of the session that conflicted is behind the store.
      if (retry > 0 && stale !== undefined) known.delete(stale)
      // A store that fails while resolving fails the commit (the caller says so), as a commit's own failure does.
      const resolved = yield* Effect.tryPromise({ try: () => resolveSession(p.chain, loadSession), catch: (error) => error })
      const planned = resolved.id === p.session ? p : { ...p, session: resolved.id, parent: resolved.parent }
      const before = resolved.found
      const exchange = build(before)
      const record = nextRecord(before, planned, exchange)
      stale = planned.session
      const result = yield* store.commit({ session: keyOf(planned.session), baseVersion: known.get(planned.session)?.version ?? 0, turnId, append: [], patch: { record: encodeRecord(record, exchange) }, request: summary(exchange) })
      remember(planned.session, { version: result.version, record })
      return { exchange, id: planned.session }
    }), 5))
  }

  const record = async (p: Planned, id: string): Promise<void> => {
    if (options.recordDir === undefined) return
    const before = known.get(id)?.record
    const t = Math.round((p.at - (before?.startedAt ?? p.at)) * 1000) / 1000
    await mkdir(options.recordDir, { recursive: true })
    await appendFile(join(options.recordDir, `${id}.jsonl`), JSON.stringify({ t, request: p.original }) + "\n")
  }

  const upstreamFor = (protocol: Protocol | undefined, headers: IncomingHttpHeaders): URL => {
    if (protocol === "anthropic") return upstreams.anthropic
    if (protocol !== undefined) return upstreams.openai
    return headers["x-api-key"] !== undefined || headers["anthropic-version"] !== undefined ? upstreams.anthropic : upstreams.openai
  }

  const forwardHeaders = (headers: IncomingHttpHeaders, base: URL, length: number | undefined, tapped: boolean): Record<string, string | Array<string>> => {
    const out: Record<string, string | Array<string>> = {}
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined || HOP_BY_HOP.has(k)) continue
      out[k] = v
    }
    out["host"] = base.host
    if (length !== undefined) out["content-length"] = String(length)
    // The usage is read from the reply as it passes: ask for it uncompressed.
    if (tapped) out["accept-encoding"] = "identity"
    return out
  }

  const open = (base: URL, req: IncomingMessage, headers: Record<string, string | Array<string>>) => {
    const prefix = base.pathname.replace(/\/+$/, "")
    const send = base.protocol === "https:" ? httpsRequest : httpRequest
    return send({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port === "" ? undefined : base.port,
      method: req.method,
      path: prefix + (req.url ?? "/"),
      headers,
      agent: base.protocol === "https:" ? agents.https : agents.http
    }).on("socket", (s) => s.setNoDelay(true))
  }

  /** Every path the proxy does not read: bytes both ways, unchanged. */
  const passThrough = (req: IncomingMessage, res: ServerResponse, base: URL) => {
    const length = req.headers["content-length"] === undefined ? undefined : Number(req.headers["content-length"])
    const headers = forwardHeaders(req.headers, base, length, false)
    if (length === undefined && req.headers["transfer-encoding"] !== undefined) headers["transfer-encoding"] = "chunked"
    const up = open(base, req, headers)
    const done = new Promise<void>((resolve) => {
      up.on("response", (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.statusMessage, filterResponseHeaders(ur.headers))
        ur.pipe(res)
        ur.on("end", () => resolve())
        ur.on("close", () => {
          if (!ur.complete) res.destroy()
          resolve()
        })
        ur.on("error", () => {
          res.destroy()
          resolve()
        })
      })
      up.on("error", (e) => {
        notice(`${req.method} ${pathOnly(req.url)}: upstream ${base.host} unreachable (${e.message}); connection closed`)
        res.destroy()
        resolve()
      })
      res.on("close", () => {
        if (!res.writableFinished) up.destroy()
        resolve()
      })
    })
    req.pipe(up)
    track(done)
  }

  const exchangeRecord = (p: Planned, status: number, stream: boolean, tapped: Tapped, before: SessionRecord | undefined, failOpen: string | undefined): ExchangeRecord => {
    const usage = tapped.usage === undefined ? undefined : toExchangeUsage(tapped.usage)
    const provider = p.protocol === "anthropic" ? "anthropic" : "openai"
    const cost = tapped.usage === undefined ? undefined : computeCost(tapped.usage, lookupModel(provider, p.model))
    const miss = usage === undefined ? undefined : missOf(before, p, usage, tapped.diagnosis)
    return {
      at: p.at,
      n: (before?.totals.requests ?? 0) + 1,
      path: pathOnly(p.protocol === "anthropic" ? "/v1/messages" : p.protocol === "openai-chat" ? "/v1/chat/completions" : "/v1/responses"),
      model: p.model,
      status,
      stream,
      ...(usage === undefined ? {} : { usage }),
      ...(cost === undefined ? {} : { costUsd: cost.total }),
      changed: p.changed,
      ...(p.ttl === undefined ? {} : { ttl: p.ttl }),
      ...(miss === undefined ? {} : { miss }),
      ...(tapped.stop === undefined ? {} : { stop: tapped.stop }),
      ...(failOpen === undefined ? {} : { failOpen })
    }
  }

  /** A provider path: read the body, plan, forward, tap the reply, commit. */
  const proxied = async (req: IncomingMessage, res: ServerResponse, protocol: Protocol, base: URL): Promise<void> => {
    // A large body with a declared length is read into a pooled buffer, given back once
    // the upstream has taken its bytes.
    const declared = Number(req.headers["content-length"] ?? Number.NaN)
    let pooled = Number.isInteger(declared) && declared >= POOLED_MIN_BYTES && declared <= MAX_PLANNED_BODY ? pool.acquire(declared) : undefined
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    // Plain 'data' events: an async iterator costs a promise and a turn per chunk.
    await new Promise<void>((resolve, reject) => {
      req.on("data", (chunk: Buffer) => {
        if (pooled !== undefined && size + chunk.length <= pooled.length) chunk.copy(pooled, size)
        else if (pooled !== undefined) {
          // More than declared: read the rest the plain way.
          chunks.push(Buffer.from(pooled.subarray(0, size)))
          pool.release(pooled)
          pooled = undefined
        }
        size += chunk.length
        if (size > MAX_PLANNED_BODY) tooLarge = true
        if (pooled === undefined) chunks.push(chunk)
      })
      req.once("end", resolve)
      req.once("error", reject)
      req.once("close", () => {
        if (!req.complete) reject(new Error("the client closed the connection before its request body ended"))
      })
    })
    const original = pooled !== undefined ? pooled.subarray(0, size) : Buffer.concat(chunks)
    let planned: Planned | undefined
    let failOpen: string | undefined
    if (tooLarge) failOpen = `the body is over ${MAX_PLANNED_BODY} bytes: forwarded as sent`
    else {
      try {
        const p = await plan(protocol, original)
        if (typeof p === "string") failOpen = p
        else planned = p
      } catch (e) {
        failOpen = `planning failed (${e instanceof Error ? e.message : String(e)}): forwarded as sent`
      }
    }
    if (failOpen !== undefined) notice(`${req.method} ${pathOnly(req.url)}: ${failOpen}`)
    const pieces = planned?.pieces ?? [original]
    const length = pieces.reduce((n, b) => n + b.length, 0)
    // Copies for the observer: the pooled buffer is written again by a later request.
    if (options.onForward !== undefined) options.onForward({ protocol, sent: Buffer.from(original), forwarded: Buffer.concat(pieces, length) })
    const up = open(base, req, forwardHeaders(req.headers, base, length, true))
    if (pooled !== undefined) {
      // 'finish': every byte was handed to the socket's kernel buffer. A request that fails
      // before that never gives its buffer back (bytes may still sit in a write queue).
      const buffer = pooled
      up.once("finish", () => pool.release(buffer))
    }
    await new Promise<void>((resolve) => {
      let finished = false
      let clientGone = false
      let upstreamCut = false
      res.on("close", () => {
        if (!finished && !res.writableFinished && !upstreamCut) {
          clientGone = true
          up.destroy()
          notice(`${req.method} ${pathOnly(req.url)}: the client disconnected before the reply ended; upstream request aborted, nothing recorded`)
        }
        // A finished exchange resolves once its commit is done.
        if (!finished) resolve()
      })
      up.on("error", (e) => {
        if (!res.headersSent) notice(`${req.method} ${pathOnly(req.url)}: upstream ${base.host} unreachable (${e.message}); connection closed`)
        res.destroy()
        resolve()
      })
      up.on("response", (ur) => {
        const sse = (ur.headers["content-type"] ?? "").includes("text/event-stream")
        const tap = makeTap(protocol, sse)
        res.writeHead(ur.statusCode ?? 502, ur.statusMessage, filterResponseHeaders(ur.headers))
        ur.on("data", (c: Buffer) => tap.push(c))
        const pair = { res, ur }
        piping.add(pair)
        res.on("close", () => piping.delete(pair))
        ur.pipe(res)
        const cut = () => {
          if (finished || clientGone || res.writableFinished) return
          upstreamCut = true
          notice(`${req.method} ${pathOnly(req.url)}: the upstream cut the reply; the client sees the cut, nothing recorded`)
          res.destroy()
        }
        ur.on("close", () => {
          if (!ur.complete) cut()
        })
        ur.on("error", cut)
        res.on("finish", () => {
          if (ur.readableAborted || !ur.complete) return
          finished = true
          const tapped = tap.finish()
          if (planned === undefined) {
            resolve()
            return
          }
          // Off the request path: the next request of the session plans from its head. A
          // refused request gives its head back now: a retry may come before its commit.
          const p = planned
          if (!advancesSession(ur.statusCode ?? 0)) p.settle("dropped")
          void idle.push(p.session, () => afterReply(p, ur.statusCode ?? 0, sse, tapped, failOpen)).then(resolve)
        })
      })
      for (const b of pieces) up.write(b)
      up.end()
    })
    // No reply reached the client: the request never happened for the session's state.
    planned?.settle("dropped")
  }

  /** After a finished reply, in the idle queue: the as-sent simulator, the commit, the log line. */
  const afterReply = async (p: Planned, status: number, sse: boolean, tapped: Tapped, failOpen: string | undefined): Promise<void> => {
    try {
      // What the request as the agent sent it would have cost: the dashboard's baseline.
      const asSent = tapped.usage === undefined ? undefined : asSentSims.send(p.session, p.protocol, p.model, p.original, p.at, tapped.usage.output)
      await nextTurn()
      const turnId = `${p.session}-${p.at}-${Math.random().toString(36).slice(2)}`
      const summary = (exchange: ExchangeRecord) => proxyRequestSummary({ protocol: p.protocol, model: p.model, at: p.at, usage: tapped.usage, asSent, miss: exchange.miss })
      const { exchange, id: session } = await commit(p, (before) => exchangeRecord(p, status, sse, tapped, before, failOpen), turnId, summary)
      const u = exchange.usage
      const prompt = u === undefined ? 0 : u.input + u.cacheRead + u.write5m + u.write1h
      log({ kind: "exchange", session, exchange, hitRate: u === undefined || prompt === 0 ? undefined : u.cacheRead / prompt })
      if (exchange.status >= 200 && exchange.status < 300) await record(p, session)
    } catch (e) {
      notice(`session ${p.session}: the state store failed (${errorText(e)}); the reply was forwarded, its record is lost`)
    } finally {
      p.settle(advancesSession(status) ? "committed" : "dropped")
    }
  }

  const server = createServer((req, res) => {
    const method = req.method ?? "GET"
    const url = req.url ?? "/"
    const isProviderPath = url.startsWith("/v1/") || url === "/v1"
    if (!isProviderPath && options.handler?.(req, res) === true) return
    if (method === "GET" && pathOnly(url) === "/strata/sessions") {
      const body = JSON.stringify({ sessions: sessionsList() })
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
      return
    }
    const protocol = protocolOf(method, url)
    const base = upstreamFor(protocol, req.headers)
    if (protocol === undefined) {
      passThrough(req, res, base)
      return
    }
    track(
      proxied(req, res, protocol, base).catch((e: unknown) => {
        notice(`${method} ${pathOnly(url)}: ${errorText(e)}`)
        res.destroy()
      })
    )
  })
  // Keep idle client connections longer than the agents' own keep-alive: a client that
  // reuses a connection the server has just closed sees ECONNRESET (Node's default is 5 s).
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  const sockets = new Set<Socket>()
  server.on("connection", (s) => {
    s.setNoDelay(true)
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })

  const sessionsList = (): Array<SessionRecord> => [...known.values()].map((k) => k.record).sort((a, b) => b.lastAt - a.lastAt)

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 8787, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const shownHost = host.includes(":") ? `[${host}]` : host
  if (!isLoopback(host)) notice(`warning: listening on ${host}, reachable from other hosts; anyone who reaches it spends the keys its clients send`)

  let closing: Promise<void> | undefined
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    sessions: sessionsList,
    settled: () => idle.drained(),
    buffered: () => {
      let writable = 0
      let readable = 0
      for (const { res, ur } of piping) {
        writable += res.writableLength
        readable += ur.readableLength
      }
      return { writable, readable, replies: piping.size }
    },
    close: () => {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        server.closeIdleConnections()
        while (inFlight.size > 0) await Promise.allSettled([...inFlight])
        server.closeIdleConnections()
        for (const s of sockets) if (!s.destroyed) s.destroySoon()
        await stopped
        agents.http.destroy()
        agents.https.destroy()
        await runtime.dispose()
      })()
      return closing
    }
  }
}

/**
 * Does a reply with this status move the session on? Only a success does: a refused
 * request (429, 529, 4xx, 5xx) wrote and read nothing in the provider's cache, so the
 * next request is planned as if it had not been sent: its gap counts from the last
 * answered request (when the cache was last touched), and what the refused request would
 * have cleared, bet or cached is not believed.
 */
const advancesSession = (status: number): boolean => status >= 200 && status < 300

const pathOnly = (url: string | undefined): string => (url ?? "/").split("?")[0]!

const errorText = (e: unknown): string => {
  if (e instanceof Error) return e.message
  if (isRecord(e) && typeof e["message"] === "string") return e["message"]
  return String(e)
}

const filterResponseHeaders = (headers: IncomingHttpHeaders): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k === "connection" || k === "keep-alive" || k === "transfer-encoding") continue
    out[k] = v
  }
  return out
}


/**
 * Sessions from content: a request belongs to the session whose latest request it extends
 * (a hash chain over its messages), with no client header. A session's id is the hash of
 * its conversation through its first message, or, for a fork (same start, another
 * continuation), through the first message where it left its parent; so any proxy
 * process that shares the store finds the same session for the same request.
 */
import { createHash } from "node:crypto"
import type { Protocol } from "./protocol.ts"

type Json = Record<string, unknown>


const h = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16)

/** The conversation of a request: what comes before it (tools, system) and its messages. */
export const conversationOf = (protocol: Protocol, body: Json): { readonly root: string; readonly messages: ReadonlyArray<unknown> } => {
  switch (protocol) {
    case "anthropic":
      return {
        root: stripped([body["system"] ?? null, body["tools"] ?? null]),
        messages: Array.isArray(body["messages"]) ? body["messages"] : []
      }
    case "openai-responses": {
      const input = body["input"]
      return {
        root: JSON.stringify([body["instructions"] ?? null, body["tools"] ?? null]),
        messages: Array.isArray(input) ? input : input === undefined ? [] : [input]
      }
    }
    case "openai-chat":
      return { root: JSON.stringify(body["tools"] ?? null), messages: Array.isArray(body["messages"]) ? body["messages"] : [] }
  }
}

/**
 * JSON without cache controls, without copying the value (a replacer drops the keys). The
 * plain serialisation first: most messages carry no marker, and a replacer is several
 * times slower on a 200k-token body.
 */
const stripped = (v: unknown): string => {
  const plain = JSON.stringify(v) ?? "null"
  if (!plain.includes('"cache_control"') && !plain.includes('"prompt_cache_key"')) return plain
  return JSON.stringify(v, (k, x: unknown) => (k === "cache_control" || k === "prompt_cache_key" ? undefined : x)) ?? "null"
}

/** `chain[i]` identifies the conversation through message `i` (cache controls ignored). */
export const chainOf = (protocol: Protocol, body: Json): Array<string> => {
  const { root, messages } = conversationOf(protocol, body)
  let prev = h(`${protocol}\u0000${root}`)
  const out: Array<string> = []
  for (const m of messages) {
    prev = h(`${prev}\u0000${stripped(m)}`)
    out.push(prev)
  }
  if (out.length === 0) out.push(prev)
  return out
}

export const sessionIdOf = (hash: string): string => `s-${hash.slice(0, 12)}`

export const commonPrefix = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

export interface Resolved<R> {
  readonly id: string
  readonly parent: string | undefined
  /** The session's record, or undefined for a new session. */
  readonly found: R | undefined
  /** Messages this request shares with the session's latest request. */
  readonly shared: number
}

/**
 * Find the session of a request's chain: start at the session named by its first message,
 * follow forks to the session it extends (or a new one named by where it diverged).
 */
export const resolveSession = async <R extends { readonly chain: ReadonlyArray<string> }>(
  chain: ReadonlyArray<string>,
  load: (id: string) => Promise<R | undefined>
): Promise<Resolved<R>> => {
  let id = sessionIdOf(chain[0]!)
  let parent: string | undefined
  for (let hops = 0; hops < 64; hops++) {
    const found = await load(id)
    if (found === undefined) return { id, parent, found: undefined, shared: 0 }
    const shared = commonPrefix(found.chain, chain)
    if (shared === found.chain.length || shared === chain.length) return { id, parent, found, shared }
    parent = id
    id = sessionIdOf(chain[shared]!)
  }
  return { id, parent, found: undefined, shared: 0 }
}

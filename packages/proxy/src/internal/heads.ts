/**
 * What the next request of a session is planned from, held in memory from the moment a
 * request is planned: the next request of the session never waits for (or misses) the
 * store commit of the one before, which runs after the reply, off the request path. A
 * session's head lives while it has requests planned and not yet committed (or dropped);
 * after that, planning reads the committed record again (the same values).
 */
import type { SessionLedger } from "./ledger.ts"

/** The latest gaps between a session's requests a record keeps. */
export const MAX_GAPS = 64

/** The part of a session record the planner reads. */
export interface PlanState {
  readonly chain: ReadonlyArray<string>
  readonly gaps: ReadonlyArray<number>
  readonly lastAt: number
  readonly lastBlocks: number
  readonly ledger?: SessionLedger | undefined
}

/** The session's state after a request (the same rule the committed record follows). */
export const nextPlanState = (
  before: PlanState | undefined,
  p: { readonly chain: ReadonlyArray<string>; readonly at: number; readonly blocks: number; readonly ledger: SessionLedger }
): PlanState => {
  // A shorter request (a side request of the same conversation) keeps the longer chain.
  const shorter = before !== undefined && p.chain.length < before.chain.length
  return {
    chain: shorter ? before.chain : p.chain,
    gaps: before === undefined ? [] : [...before.gaps, Math.max(0, p.at - before.lastAt)].slice(-MAX_GAPS),
    lastAt: Math.max(before?.lastAt ?? p.at, p.at),
    lastBlocks: Math.max(p.blocks, shorter ? before.lastBlocks : 0),
    ledger: p.ledger
  }
}

export interface Heads {
  /** The session's latest planned state, or undefined: read the committed record. */
  readonly get: (id: string) => PlanState | undefined
  /**
   * A request of the session was planned from `before` to `next`. Call the result once the
   * request is settled: `committed` (its commit landed or failed after the reply) or
   * `dropped` (no reply: the head goes back to `before` unless a later request already
   * planned from it).
   */
  readonly advance: (id: string, before: PlanState | undefined, next: PlanState) => (outcome: "committed" | "dropped") => void
  /** Sessions with a head (requests in flight). */
  readonly size: () => number
}

export const makeHeads = (): Heads => {
  const heads = new Map<string, { state: PlanState | undefined; pending: number }>()
  return {
    get: (id) => heads.get(id)?.state,
    advance: (id, before, next) => {
      const head = heads.get(id) ?? { state: undefined, pending: 0 }
      heads.set(id, head)
      head.state = next
      head.pending++
      let settled = false
      return (outcome) => {
        if (settled) return
        settled = true
        if (outcome === "dropped" && head.state === next) head.state = before
        head.pending--
        if (head.pending === 0 && heads.get(id) === head) heads.delete(id)
      }
    },
    size: () => heads.size
  }
}

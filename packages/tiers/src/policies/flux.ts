/**
 * `flux`: the mass-balance ("membrane") controller. N is pure age. Active items enter
 * L3 by age alone (admission); above L3, each membrane between two tiers carries a
 * flux computed from their item counts and token masses, and moves one item up
 * whenever that flux reaches the deadband. There is no gate and nothing moves down, so
 * content cannot pile up in L3 the way it can under the cascade.
 */
import { CACHED_TIERS, type CachedTier, type TrackedItem } from "@strata/core"
import { compareKeys, Heap, kindOf, rankOf } from "../model/order.ts"
import { piggybackHistory } from "../internal/policies/history.ts"
import type { PromotionPolicy } from "./policy.ts"

/**
 * The flux across a membrane from a lower tier (`cl` items, `tl` tokens) to the upper
 * one (`cu`, `tu`): a Goldman-Hodgkin-Katz current with voltage V = tl - tu, rectified
 * so it only ever pushes upward.
 *
 * @example
 * ```ts
 * import { membraneFlux } from "@strata/tiers"
 * membraneFlux(20, 0, 4000, 0, 1.6e-6, 98952) // ~3.2: fires (deadband 1)
 * ```
 */
export const membraneFlux = (cl: number, cu: number, tl: number, tu: number, permeability: number, thermalVoltage: number): number => {
  const v = tl - tu
  const x = v / thermalVoltage
  let phi: number
  if (Math.abs(x) < 1e-9) phi = permeability * thermalVoltage * (cl - cu)
  else if (x > 50) phi = permeability * v * cl
  else if (x < -50) phi = permeability * v * cu
  else {
    const e = Math.exp(-x)
    phi = (permeability * v * (cl - cu * e)) / (1 - e)
  }
  return phi > 0 ? phi : 0
}

const protectedItem = (key: string): boolean => key === "system" || kindOf(key) === "history"

// Smallest first: moving the lightest item perturbs the balance least.
const moverOrder = (a: TrackedItem, b: TrackedItem): number => a.tokens - b.tokens || b.n - a.n || compareKeys(a.key, b.key)
// Oldest first, then heaviest.
const admissionOrder = (a: TrackedItem, b: TrackedItem): number => b.n - a.n || b.tokens - a.tokens || compareKeys(a.key, b.key)

/** The membrane policy. */
export const fluxPolicy: PromotionPolicy = {
  name: "flux",
  entryN: () => 0,
  agesAbsent: true,
  // Heaviest tiers most stable: above every membrane the upper side outweighs the lower
  // one, so a fresh placement is already near equilibrium and does not churn.
  placement: {
    tokens: { L0: 0.4, L1: 0.3, L2: 0.2, L3: 0.1 },
    counts: { L0: 0.4, L1: 0.3, L2: 0.2, L3: 0.1 }
  },
  promote: (work) => {
    const { thresholds, flux } = work.config
    const count = [0, 0, 0, 0]
    const mass = [0, 0, 0, 0]
    const members: Array<Array<TrackedItem>> = [[], [], [], []]
    const admissible: Array<TrackedItem> = []
    for (const item of work.items.values()) {
      if (kindOf(item.key) === "history" || work.isHidden(item.key)) continue
      const rank = rankOf(item.tier)
      if (rank > 3) {
        if (item.n >= thresholds.L3 && !protectedItem(item.key)) admissible.push(item)
        continue
      }
      count[rank] = (count[rank] ?? 0) + 1
      mass[rank] = (mass[rank] ?? 0) + item.tokens
      if (!protectedItem(item.key)) members[rank]?.push(item)
    }
    const admission = new Heap(admissionOrder, admissible)
    // Heaps are built only for tiers whose membrane fires; most updates build none.
    const movers: Array<Heap<TrackedItem> | undefined> = [undefined, undefined, undefined, undefined]
    const heapOf = (rank: number): Heap<TrackedItem> => {
      let heap = movers[rank]
      if (heap === undefined) {
        heap = new Heap(moverOrder, members[rank] ?? [])
        movers[rank] = heap
      }
      return heap
    }
    const arrive = (item: TrackedItem, rank: number): void => {
      count[rank] = (count[rank] ?? 0) + 1
      mass[rank] = (mass[rank] ?? 0) + item.tokens
      const heap = movers[rank]
      if (heap !== undefined) heap.push(item)
      else members[rank]?.push(item)
    }

    for (let pass = 0; pass < flux.maxPasses; pass++) {
      let moved = false
      const admitted = admission.pop()
      if (admitted !== undefined) {
        arrive(work.move(admitted.key, "L3", 0, "graduated"), 3)
        moved = true
      }
      for (let lower = 3; lower >= 1; lower--) {
        const upper = lower - 1
        const phi = membraneFlux(count[lower] ?? 0, count[upper] ?? 0, mass[lower] ?? 0, mass[upper] ?? 0, flux.permeability, flux.thermalVoltage)
        if (phi < flux.deadband) continue
        const mover = heapOf(lower).pop()
        if (mover === undefined) continue
        count[lower] = (count[lower] ?? 0) - 1
        mass[lower] = (mass[lower] ?? 0) - mover.tokens
        arrive(work.move(mover.key, CACHED_TIERS[upper] as CachedTier, 0, "promoted"), upper)
        moved = true
      }
      if (!moved) break
    }

    piggybackHistory(work, 0)
  }
}

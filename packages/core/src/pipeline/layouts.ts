/**
 * The layout modes, by name. `LayoutMode` picks one for a request (default "journal");
 * the layout's module says the order its requests are in. A new mode is one module in
 * this folder and one line in `LAYOUTS`. Flat assembly (`flat.ts`) is not a mode: the
 * pipeline falls back to it when no `Tracker` is provided.
 */
import { Context } from "effect"
import type { Layout } from "./base/state.ts"
import { journalLayout } from "./journal/journal.ts"
import { seedLayout } from "./seed/seed.ts"

/** Every layout mode's layout. */
export const LAYOUTS = {
  journal: journalLayout,
  seed: seedLayout
} as const satisfies Readonly<Record<string, Layout>>

/**
 * How the pipeline lays out a tiered request: `journal` (the default; frozen tiers and an
 * append-only L3, see `layouts/journal.ts`) or `seed` (the tiered layout, docs/pipeline.md#the-tiered-layout: every tier
 * re-rendered from the tracker on every request, history graduating by N).
 */
export type LayoutMode = keyof typeof LAYOUTS

/** Whether `name` is a layout mode (for a name given as data, such as a CLI flag). */
export const isLayoutMode = (name: string): name is LayoutMode => Object.hasOwn(LAYOUTS, name)

/** The layout modes' names. */
export const LAYOUT_MODES: ReadonlyArray<LayoutMode> = Object.keys(LAYOUTS).filter(isLayoutMode)

/**
 * The layout mode of the requests assembled in this context (default "journal").
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { LayoutMode, Pipeline } from "@strata/core/effect"
 * const seedLayout = Layer.mergeAll(Pipeline.layer, Layer.succeed(LayoutMode, "seed"))
 * ```
 */
export const LayoutMode = Context.Reference<LayoutMode>("@strata/core/pipeline/LayoutMode", {
  defaultValue: () => "journal"
})
